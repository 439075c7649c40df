#include "task/timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace bench {

double median(std::vector<double> t) {
  if (t.empty()) return 0;
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double coefficient_of_variation(const std::vector<double>& t) {
  if (t.size() < 2) return 0;
  double sum = 0, sq = 0;
  for (double x : t) sum += x;
  const double mean = sum / static_cast<double>(t.size());
  for (double x : t) sq += (x - mean) * (x - mean);
  return mean > 0 ? std::sqrt(sq / static_cast<double>(t.size() - 1)) / mean : 0.0;
}

}  // namespace bench
