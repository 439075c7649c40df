#include "profile.hpp"

#include <set>
#include <stdexcept>

#if POLICY_BENCH_KINETO
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace policy_bench {

#if POLICY_BENCH_KINETO

namespace prof = torch::profiler::impl;
namespace ap = torch::autograd::profiler;

static const std::set<prof::ActivityType> kActivities{prof::ActivityType::CPU,
                                                      prof::ActivityType::CUDA};

bool profiler_available() { return true; }

void profiler_start() {
  prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  ap::prepareProfiler(config, kActivities);
  ap::enableProfiler(config, kActivities);
}

void profiler_stop(const std::string& trace_path) {
  auto result = ap::disableProfiler();
  result->save(trace_path);
}

#else

bool profiler_available() { return false; }
void profiler_start() { throw std::runtime_error("--profile needs a CUDA build of libtorch"); }
void profiler_stop(const std::string&) {}

#endif

}  // namespace policy_bench
