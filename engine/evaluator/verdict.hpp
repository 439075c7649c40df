// Inside engine/evaluator only: the verdict on one evaluation (status, message,
// timing figures) from what the zygote recorded, and the words for a kernel's fault.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluator/job.hpp"
#include "task/task.hpp"
#include "task/timing_stats.hpp"
#include "wire/options.hpp"

namespace bench::detail {

struct VerdictContext {
  const Task& task;
  double peak_gflops = 0;           // 0: no peak rule
  double peak_gbps = 0;             // 0: no bandwidth rule
  uintptr_t stack_lo = 0, stack_hi = 0;  // the kernel's main stack, for overflow messages
};

// The result record the engine receives (its fields as wire/result_record.hpp declares them). The
// first failure in this order decides: timeout, compiling, the compile report, a fault,
// a refused measurement, a protocol breach, a wrong result, an early end; else ok, unless
// the figure is impossible (the peak rule, the last line of defence).
nlohmann::json verdict(const Job& job, const ResolvedOptions& opts, const VerdictContext& ctx);
// The record of a kernel that was not run because the batch's kernel `index` has its
// compiled code: that kernel's `measured` record, with the fields verdict() takes from
// this kernel's own compile (`own`, its verdict), and same_code_as.
nlohmann::json shared_verdict(const nlohmann::json& measured, const nlohmann::json& own, size_t index);
// "the kernel accessed 8 bytes past the end of C (SIGSEGV at 0x...)", ...
std::string describe_fault(const Job& job, const ResolvedOptions& opts, const VerdictContext& ctx);

}  // namespace bench::detail
