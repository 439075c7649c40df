// Kernel evaluation: compile, run in a sandbox, verify and time (engine/bench).
//
// Evaluations happen in the evaluation process (the zygote): a program image of its own,
// engine-sandbox (engine/sandbox), started by fork and exec, so nothing of the engine's
// (libtorch, OpenBLAS, model weights) is mapped there. It is single-threaded, holds the
// inputs and reference outputs of each problem and forks one child per kernel: the child
// compiles (through a Backend, compiler.hpp), checks what the object references,
// tightens itself (rlimits, seccomp) and, when the zygote lets it, runs and times the
// kernel. Timed runs of different kernels never overlap; compiles of a batch run in
// parallel. The zygote verifies the output itself, so nothing a kernel does inside its
// child changes the verdict's inputs. If the zygote dies, the next request starts a new one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/machine.hpp"
#include "wire/options.hpp"
#include "wire/result_record.hpp"

namespace bench {

// One evaluation's record as a struct, a member for each field that
// wire/result_record.hpp declares (its kind, meaning and C++ type are there); a field the
// record lacks keeps its zero value.
struct Result {
#define ENGINE_RESULT_MEMBER(name, kind, type, kept, meaning) type name{};
  ENGINE_RESULT_FIELDS(ENGINE_RESULT_MEMBER)
#undef ENGINE_RESULT_MEMBER
};

// Starts the evaluation process (idempotent; evaluations also start it on demand).
// Throws when the engine-sandbox program cannot be found.
void start_zygote();
bool zygote_started();
int zygote_pid();  // -1 when not started
// The engine-sandbox program started: $ENGINE_SANDBOX, else the one beside this program,
// else the one the build made. Throws when none exists.
std::string sandbox_program();

// Checks options; throws std::invalid_argument naming the bad one. Resolves nothing, so
// it serves wherever options are taken in (a script's call, a batch for other nodes).
void check_options(const EvalOptions& opts);
// Checks and resolves them for this node (its cores, its CPU's flags, the default back
// end): done once, by the process that evaluates.
nlohmann::json resolve_options(const EvalOptions& opts);

Result evaluate(const std::string& source, const EvalOptions& opts = {});
std::vector<Result> evaluate_batch(const std::vector<std::string>& sources, const EvalOptions& opts = {});
// OpenBLAS cblas_dgemm on the same problem, fresh inputs for every call and every call
// checked as for a kernel, its threads pinned one per core and its pool woken before
// each call, as in a user's loop. threads 0: the fastest count for the problem (all
// cores, then half as many while that is faster; by median), the counts tried in
// thread_trials.
Result reference(const EvalOptions& opts = {});

// The same evaluations as the evaluation process's records (JSON, one per source): the
// one shape that travels between processes and nodes and reaches the scripts; a C++
// caller that wants a struct turns one into a Result (result_from_record).
nlohmann::json evaluate_records(const std::vector<std::string>& sources, const EvalOptions& opts = {});
nlohmann::json reference_record(const EvalOptions& opts = {});
Result result_from_record(const nlohmann::json& record);

// CUDA on this node (engine/cuda), asked of a fresh child of the evaluation process:
// cuda_probe says whether GPU 0, its driver and NVRTC are there (and why not);
// cuda_compile compiles CUDA C++ in memory for GPU 0 and loads it, finding `entries`
// (extern "C" __global__ functions). Records as cuda::probe and cuda::compile give them.
nlohmann::json cuda_probe();
nlohmann::json cuda_compile(const std::string& source, const std::vector<std::string>& entries,
                            double timeout = 60);
// cuda_run compiles and runs one launch (cuda/launch.hpp) as cuda::run describes; a
// malformed launch throws std::invalid_argument before any process is asked.
nlohmann::json cuda_run(const std::string& source, const nlohmann::json& launch, double timeout = 60);
// cuda_sandbox asks a CUDA request's child (confined as every one is) to try the calls its
// filter refuses: {"fork": "EPERM", ...}, "allowed" where one went through; and what it
// printed (two lines, then `print_bytes` more), kept as kernel_output (4 KiB at most) and
// kernel_output_bytes, as a kernel's printf is.
nlohmann::json cuda_sandbox(size_t print_bytes = 0);
// cuda_batch answers CUDA requests with the evaluation process's warm CUDA child, which
// starts the driver and makes its context once and is kept between calls: `items` are
// {op = "cuda_run", source, launch} (cuda_run's record each) or {op = "cuda_sandbox",
// print_bytes, spin_ms} (cuda_sandbox's, after spin_ms of work: for tests without a GPU),
// `timeout` seconds each. A run that failed or timed out ends the warm child, and the next
// item gets a fresh one; each record says which (cuda_child: 1, 2, ... over the evaluation
// process's life). One record per item, in order; a malformed item throws
// std::invalid_argument naming it before any process is asked. cuda_release ends the warm
// child (and frees its GPU memory).
nlohmann::json cuda_batch(const nlohmann::json& items, double timeout = 60);
void cuda_release();

// Options sent to another node (wire/options.hpp's options_to_json) stay unresolved:
// threads 0 and march "native" mean that node's cores and CPU.

}  // namespace bench
