#include "task/rate_bound.hpp"

#include <cstdio>

namespace bench {

static std::string g4(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

static std::string refusal(double rate, double peak, const std::string& unit, const std::string& name) {
  return "the timings give " + g4(rate) + " " + unit + ", more than 4x " + name + " (" + g4(peak) + " " + unit +
         "): not a measurement";
}

std::string impossible_rate(double gflops, double gbps, const PeakRates& peak) {
  if (peak.gflops > 0 && gflops > 4 * peak.gflops) return refusal(gflops, peak.gflops, "GFLOPS", peak.gflops_name);
  if (peak.gbps > 0 && gbps > 4 * peak.gbps) return refusal(gbps, peak.gbps, "GB/s", peak.gbps_name);
  return "";
}

}  // namespace bench
