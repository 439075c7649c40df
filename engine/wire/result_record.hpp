// The evaluation's record: what one judged kernel (or one reference) carries from its
// judge to the engine and the scripts, whichever judge made it (the evaluation process
// for CPU kernels, the CUDA judge). Every field it may carry is declared here once, with
// its JSON kind, its C++ type (bench::Result's member), whether a script keeps it with a
// judged kernel (method/evaluate.lua), and its meaning; a record carries no other field
// and each field has its kind (check_result_record). Absent fields mean "not measured".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// X(name, kind, C++ type, kept, meaning)
#define ENGINE_RESULT_FIELDS(X)                                                                                    \
  X(status, text, std::string, true,                                                                               \
    "library_violation, compile_error, timeout, runtime_error, verification_error, rejected (a measurement "        \
    "refused: work left running, a forged record, an impossible figure) or ok")                                    \
  X(message, text, std::string, true, "the compiler's diagnostics, or the cause of a failure")                     \
  X(gflops, number, double, true, "the task's flops over the fastest timed call, GFLOPS; 0 unless ok")             \
  X(gbps, number, double, true, "the task's bytes a call over the fastest timed call, GB/s: the roofline's other " \
    "axis")                                                                                                        \
  X(times, numbers, std::vector<double>, true, "seconds of each timed call")                                       \
  X(min, number, double, true, "the fastest timed call, seconds (0: nothing timed)")                               \
  X(median, number, double, true, "the timed calls' median, seconds (0: nothing timed)")                           \
  X(mean, number, double, false, "the timed calls' mean, seconds (0: nothing timed)")                              \
  X(cov, number, double, true, "the timed calls' coefficient of variation")                                        \
  X(harness_times, numbers, std::vector<double>, false,                                                            \
    "the same calls by the evaluation process's clock (command sent to answer read): the bound of times")          \
  X(kernel_times, numbers, std::vector<double>, false,                                                             \
    "the same calls by the kernel process's own clock: counted only where longer (it is the kernel's)")            \
  X(call_starts, numbers, std::vector<double>, false,                                                              \
    "when each timed call began (CLOCK_MONOTONIC seconds); its span is the matching harness_times entry")          \
  X(busy_threads, numbers, std::vector<double>, false,                                                             \
    "every call's CPU time over its span, warm-up calls first: the threads at work")                               \
  X(calls_over_cpu_bound, integer, int, false,                                                                     \
    "calls not timed: more CPU time than the threads could use (a second refuses the kernel)")                     \
  X(round_trip, number, double, false, "the fastest command-answer round trip before the calls, seconds")          \
  X(compile_ms, number, double, true,                                                                              \
    "compiling and loading, milliseconds (the time it was held stopped left out)")                                 \
  X(check_ms, number, double, false, "the checks between calls (stop, verify, the next inputs), milliseconds")     \
  X(compile_start, number, double, false, "CLOCK_MONOTONIC seconds: the kernel's child forked")                    \
  X(compile_end, number, double, false, "the same clock: the child's compile report read")                         \
  X(compile_held, number, double, false,                                                                           \
    "seconds the compile was held stopped while a pool of compiled kernels ran (not in compile_ms)")               \
  X(run_start, number, double, false,                                                                              \
    "the same clock: the kernel let run (a batch's kernels take turns, so their windows overlap; their calls "     \
    "never do)")                                                                                                   \
  X(run_end, number, double, false, "the same clock: the kernel's process gone")                                   \
  X(max_rel_error, number, std::optional<double>, true,                                                            \
    "the largest relative error over every checked element of every call; 1e308 stands for one that is not "      \
    "finite (JSON has no infinity); absent when nothing was checked")                                              \
  X(backend, text, std::string, true, "what compiled the kernel (gcc, gccjit, kernelc); a reference's library")    \
  X(fallback, flag, bool, false, "the chosen back end said unsupported, and gcc compiled the kernel")              \
  X(fallback_reason, text, std::string, false, "why the chosen back end said unsupported")                         \
  X(external_symbols, texts, std::vector<std::string>, false, "the symbols the object code takes from outside it")  \
  X(options, object, nlohmann::json, false,                                                                        \
    "the options used, resolved for the node (march as explicit flags, the back end, threads)")                    \
  X(environment, texts, std::vector<std::string>, false,                                                           \
    "the OpenMP variables the kernel's process had: the harness's, never the user's")                              \
  X(features, object, nlohmann::json, true,                                                                        \
    "the techniques the source uses, read by the compile in the kernel's child (absent without a front end)")      \
  X(remarks, text, std::string, true,                                                                              \
    "gcc's remarks on the kernel's loops: vectorised, or not and why; bounded; absent when it said nothing")       \
  X(same_code_as, integer, std::optional<size_t>, false,                                                           \
    "not run: its object code is that of this kernel of the batch (0-based), whose measurement and verdict it "    \
    "carries beside its own compile report (the share option)")                                                   \
  X(node, text, std::string, true, "the benchmark worker that measured it (host:rank); absent: this process")      \
  X(counters, object, nlohmann::json, true,                                                                        \
    "per timed call, counted by the evaluation process on the kernel's process: cycles, instructions, "            \
    "l1d_read_misses, llc_misses, fp_*_double by vector width (Intel), task_clock_ms, page_faults, "               \
    "context_switches, cpu_migrations")                                                                            \
  X(counters_unavailable, object, nlohmann::json, true,                                                            \
    "{counter = why} for what this machine cannot count (no hardware PMU, perf_event_paranoid, ...)")              \
  X(library, text, std::string, false, "a reference's library (openblas, blis, a spec's yardstick)")                \
  X(version, text, std::string, false, "that library's version")                                                  \
  X(thread_trials, records, nlohmann::json, false,                                                                 \
    "a reference searching its thread count: the counts tried {threads, min, median, cov}")                       \
  X(yardstick_trials, records, nlohmann::json, false,                                                              \
    "a reference: every yardstick and thread count tried {yardstick, threads, status, min, median, cov | "        \
    "message}")                                                                                                    \
  X(cuda_status, text, std::string, true,                                                                          \
    "the CUDA judge's own status where the reward's statuses name it otherwise (load_error, launch_error)")        \
  X(kernel_output, text, std::string, true,                                                                        \
    "what a CUDA kernel printed (device printf), kept with the result and out of its message")                     \
  X(vs_yardstick, number, double, true, "a CUDA kernel's speed over libtorch's own op's (median over median)")     \
  X(speed, number, double, false,                                                                                  \
    "what the rewards count where the judge sets its own scale (a CUDA task's; evaluate.lua sets a memory-bound "  \
    "task's from gbps)")                                                                                           \
  X(unit, text, std::string, false, "speed's unit where the judge sets it")

namespace bench {

// A field's JSON kind: a string, a number, an integer, a boolean, an array of numbers, of
// strings, an object, an array of objects.
enum class FieldKind { text, number, integer, flag, numbers, texts, object, records };

struct ResultField {
  const char* name;
  FieldKind kind;
  bool kept;  // kept with a judged kernel by the scripts
  const char* meaning;
};

const std::vector<ResultField>& result_fields();
const char* kind_name(FieldKind kind);

// "" when the record keeps to the declaration; otherwise its first problem, naming the
// field ("an undeclared field 'x'", "field 'gflops' is a string where a number is declared").
std::string check_result_record(const nlohmann::json& record);

}  // namespace bench
