// The last line of defence against a forged or broken timing: a rate no measurement on
// this machine can give. The CPU harness's verdict and the CUDA tasks' judge share it.
#pragma once

#include <string>

namespace bench {

// A machine's peak rates, named as a refusal names them. A rate of 0 bounds nothing.
struct PeakRates {
  double gflops = 0;
  double gbps = 0;
  std::string gflops_name = "the machine's peak";
  std::string gbps_name = "the fastest the machine's cores can move bytes";
};

// Why a kernel's figures cannot be a measurement, "" when they can: more than 4x either
// peak (caches may beat DRAM, not by that much). Memory-bound tasks (a transpose has no
// FLOPs) are bounded by the second.
std::string impossible_rate(double gflops, double gbps, const PeakRates& peak);

}  // namespace bench
