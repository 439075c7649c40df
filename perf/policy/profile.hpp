// A window of the device's activity (kernels, copies, runtime calls) written as a Chrome
// trace through libtorch's Kineto profiler. Needs a CUDA build of libtorch.
#pragma once

#include <string>

namespace policy_bench {

bool profiler_available();
void profiler_start();
void profiler_stop(const std::string& trace_path);  // writes the trace (JSON)

}  // namespace policy_bench
