// The verdict on one evaluation and the words for a kernel's fault: what the engine and
// the model's repair prompts read.
#include "evaluator/verdict.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernel_child/child.hpp"
#include "task/rate_bound.hpp"

namespace bench::detail {

namespace {

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

}  // namespace

// What the forbidden call was given: the file it names, or what it wrote where.
std::string fault_argument(const FaultRecord& f) {
  const std::string text(f.text, strnlen(f.text, sizeof f.text));
  if (f.fd >= 0) return " (to descriptor " + std::to_string(f.fd) + (text.empty() ? "" : ": \"" + text + "\"") + ")";
  return text.empty() ? "" : " on \"" + text + "\"";
}

std::string describe_fault(const Job& job, const ResolvedOptions& opts, const VerdictContext& ctx) {
  const FaultRecord& f = *job.fault;
  const uintptr_t a = f.addr;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(a));
  const std::string where = f.main_thread ? "" : " (in an OpenMP thread)";
  switch (f.sig) {
    case SIGSYS:
      return "the kernel made the forbidden system call '" + syscall_name(f.syscall_nr) + "'" +
             fault_argument(f) + where +
             ": kernels may only compute (no processes, files, sockets, signals or exec)";
    case SIGSEGV:
    case SIGBUS: {
      if (f.code == SI_KERNEL)  // no faulting address: a general protection fault
        return "the kernel caused a general protection fault" + where +
               " (a privileged instruction, a non-canonical address, or int $0x80 on a system "
               "without the 32-bit ABI)";
      const bool write = f.sig == SIGSEGV && f.code == SEGV_ACCERR;
      std::string loc = job.stage ? ctx.task.locate(*job.stage, a, write) : "";
      if (!loc.empty()) return "the kernel " + loc + where + " (" + signal_name(f.sig) + " at " + hex + ")";
      const Stage* st = job.stage.get();
      for (size_t o = 0; st && o < st->outputs.size(); ++o) {
        const GuardedBuffer& out = st->outputs[o];
        if (!out.in_guard(a)) continue;
        const std::string& name = st->output_names.at(o);
        auto d = reinterpret_cast<uintptr_t>(out.data());
        return a < d ? "the kernel accessed " + std::to_string(d - a) + " bytes before the start of " + name + where
                     : "the kernel accessed " + std::to_string(a - d - out.bytes()) + " bytes past the end of " +
                           name + where;
      }
      if (a < 65536)
        return std::string("the kernel dereferenced a null pointer") + where + " (" + signal_name(f.sig) + " at " +
               hex + "); an allocation fails (returns NULL) beyond the memory limit of " +
               std::to_string(opts.memory_mb) + " MB";
      if (a >= ctx.stack_lo && a < ctx.stack_hi)
        return "the kernel overflowed the stack (" + signal_name(f.sig) + " at " + hex + ", stack limit " +
               std::to_string((ctx.stack_hi - ctx.stack_lo - (1 << 20)) >> 20) + " MB)";
      // Far off the end of an output (past its guard page): the nearest one below.
      const GuardedBuffer* near = nullptr;
      std::string near_name;
      for (size_t o = 0; st && o < st->outputs.size(); ++o) {
        uintptr_t end = reinterpret_cast<uintptr_t>(st->outputs[o].data()) + st->outputs[o].bytes();
        if (a >= end && a - end < (uintptr_t(1) << 30) &&
            (!near || end > reinterpret_cast<uintptr_t>(near->data()) + near->bytes())) {
          near = &st->outputs[o];
          near_name = st->output_names.at(o);
        }
      }
      if (near)
        return "the kernel accessed " + std::to_string(a - reinterpret_cast<uintptr_t>(near->data()) - near->bytes()) +
               " bytes past the end of " + near_name + where + " (" + signal_name(f.sig) + " at " + hex + ")";
      return "the kernel made an invalid memory access" + where + " (" + signal_name(f.sig) + " at " + hex +
             (f.main_thread ? "" : "; a stack overflow in a thread looks the same") + ")";
    }
    case SIGILL:
      return std::string("the kernel executed an illegal instruction at ") + hex + where +
             " (an instruction this CPU lacks, or __builtin_trap)";
    case SIGFPE: return "the kernel raised an arithmetic exception" + where + " (integer division by zero?)";
    case SIGABRT: return "the kernel aborted" + where;
    case SIGTRAP: return "the kernel hit a trap instruction" + where;
    default: return "the kernel raised " + signal_name(f.sig) + where;
  }
}

// What a record holds of its own kernel's compile (verdict() below sets them from the
// compile report and the zygote's clock).
static const char* const kOwnCompile[] = {"backend",         "compile_ms",       "compile_start", "compile_end",
                                          "compile_held",    "fallback",         "fallback_reason",
                                          "external_symbols", "features",        "remarks"};

// The child's compile time by its own clock, less what of it the kernel's compile was held
// stopped while a pool ran: the child's window ends as its report is read, and is as long
// as its figure.
static double own_compile_ms(double child_ms, const Job& job) {
  const double to = job.compile_end, from = to - child_ms * 1e-3;
  double held = 0;
  for (auto [a, b] : job.holds) held += std::max(0.0, std::min(b, to) - std::max(a, from));
  return std::max(0.0, child_ms - held * 1e3);
}

json shared_verdict(const json& measured, const json& own, size_t index) {
  json r = measured;
  for (const char* k : kOwnCompile) {
    if (own.contains(k)) r[k] = own[k];
    else r.erase(k);
  }
  r["same_code_as"] = index;
  return r;
}

json verdict(const Job& job, const ResolvedOptions& opts, const VerdictContext& ctx) {
  json r;
  r = {{"status", "runtime_error"}, {"gflops", 0.0}, {"gbps", 0.0}, {"times", json::array()}, {"min", 0.0},
       {"median", 0.0}, {"mean", 0.0}, {"compile_ms", 0.0}, {"message", ""},
       {"backend", opts.backend}, {"fallback", false}, {"options", opts.as_recorded()}};
  r["environment"] = openmp_environment(opts.threads, job.reference);
  if (job.run_start > 0) {
    r["run_start"] = job.run_start;
    r["run_end"] = job.run_end;
  }
  if (job.compile_end > 0) {
    double held = 0;
    for (auto [from, to] : job.holds) held += to - from;
    r["compile_start"] = job.compile_start;
    r["compile_end"] = job.compile_end;
    r["compile_held"] = held;
  }
  if (job.compiled) {
    const json& c = *job.compiled;
    r["backend"] = c.value("backend", r["backend"].get<std::string>());
    r["compile_ms"] = own_compile_ms(c.value("compile_ms", 0.0), job);
    r["message"] = c.value("diagnostics", "");
    r["fallback"] = c.value("fallback", false);
    for (const char* k : {"fallback_reason", "external_symbols", "features", "remarks"})
      if (c.contains(k)) r[k] = c[k];
    if (c.contains("library")) r["library"] = c["library"];  // a yardstick's
    if (c.contains("version")) r["version"] = c["version"];
  }
  const int st = job.wstatus;
  auto set = [&](const char* status, const std::string& msg) {
    r["status"] = status;
    std::string prev = r["message"];
    r["message"] = prev.empty() ? msg : msg + "\n" + prev;
  };
  if (!job.timeout_msg.empty()) {
    set("timeout", job.timeout_msg);
  } else if (!job.compiled) {
    if (!job.protocol_error.empty()) set("runtime_error", "the kernel " + job.protocol_error);
    else if (WIFSIGNALED(st))
      set("compile_error", "compiling ended abnormally: the compiler process was killed by " +
                               signal_name(WTERMSIG(st)));
    else
      set("compile_error", "compiling ended abnormally (exit status " + std::to_string(WEXITSTATUS(st)) + ")");
  } else if (job.compiled->value("status", "") != "ok") {
    r["status"] = job.compiled->value("status", "compile_error");
  } else if (job.fault) {
    set("runtime_error", describe_fault(job, opts, ctx));
  } else if (!job.rejected.empty()) {
    set("rejected", job.rejected);
  } else if (!job.protocol_error.empty()) {
    set("rejected", "the kernel " + job.protocol_error);
  } else if (!job.wrong.empty()) {
    set("verification_error", job.wrong);
  } else if (!job.done && WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    std::string why = sig == SIGXCPU   ? "exceeded its CPU-time limit (SIGXCPU)"
                      : sig == SIGSYS  ? "made a system call through a foreign ABI (int $0x80 or x32; SIGSYS)"
                      : sig == SIGXFSZ ? "tried to write to a file (SIGXFSZ)"
                                       : "was killed by " + signal_name(sig);
    set("runtime_error", "the kernel " + why + " (max resident memory " +
                             std::to_string(job.ru.ru_maxrss / 1024) + " MB)");
  } else if (!job.done) {
    set("runtime_error", "the kernel ended its process (exit status " + std::to_string(WEXITSTATUS(st)) +
                             ") before returning from " + ctx.task.entry());
  } else {
    const std::vector<double>& t = job.times;
    std::vector<double> sorted = t;
    std::sort(sorted.begin(), sorted.end());
    double sum = 0;
    for (double x : t) sum += x;
    const double mean = sum / static_cast<double>(t.size());
    r["times"] = t;
    r["harness_times"] = job.elapsed;
    r["kernel_times"] = job.own_times;
    r["call_starts"] = job.call_starts;
    if (!job.busy.empty()) r["busy_threads"] = job.busy;  // warm-up calls first
    r["calls_over_cpu_bound"] = job.calls_over_cpu_bound;
    r["round_trip"] = job.rtt;
    r["min"] = sorted.front();
    r["median"] = median(t);
    r["mean"] = mean;
    r["cov"] = coefficient_of_variation(t);
    // The fastest call: the one least disturbed by everything else on the node. Measured
    // against the mean and the median of the same calls (perf/bench/timing_bench.lua,
    // docs/performance.md) it ranks kernels 5-20% apart best and spreads least across
    // evaluations; no kernel can make one call fast without doing its work (every call
    // has inputs of its own and is checked whole).
    const double gflops = sorted.front() > 0 ? ctx.task.flops() / sorted.front() * 1e-9 : HUGE_VAL;
    const double gbps = sorted.front() > 0 ? ctx.task.bytes() / sorted.front() * 1e-9 : HUGE_VAL;
    // The last line of defence, not the first: the clock checks above come first.
    const std::string impossible = impossible_rate(gflops, gbps, PeakRates{ctx.peak_gflops, ctx.peak_gbps});
    if (!impossible.empty()) {
      set("rejected", impossible);
    } else {
      r["status"] = "ok";
      r["gflops"] = gflops;
      r["gbps"] = gbps;  // the roofline's other axis
    }
    if (job.counted.is_object()) {  // per timed call, and what this machine could not count
      r["counters"] = job.counted.at("counters");
      r["counters_unavailable"] = job.counted.at("counters_unavailable");
    }
  }
  r["check_ms"] = job.check_s * 1e3;
  if (job.checked) r["max_rel_error"] = std::isfinite(job.max_rel_error) ? job.max_rel_error : 1e308;
  return r;
}

}  // namespace bench::detail
