#include "train/micro_batches.hpp"

#include <algorithm>
#include <limits>

namespace train {

std::vector<size_t> fill_cuts(const std::vector<int64_t>& longest_first, int64_t budget) {
  std::vector<size_t> sizes;
  for (size_t i = 0, start = 0; i < longest_first.size(); ++i) {
    if (sizes.empty() || static_cast<int64_t>(sizes.back() + 1) * longest_first[start] > budget) {
      sizes.push_back(0);
      start = i;
    }
    ++sizes.back();
  }
  return sizes;
}

std::vector<size_t> least_padding_cuts(const std::vector<int64_t>& longest_first, int64_t budget) {
  const size_t n = longest_first.size();
  // best[j]: the least cost of rows [0, j); from[j]: where the last group of that starts.
  std::vector<int64_t> best(n + 1, std::numeric_limits<int64_t>::max());
  std::vector<size_t> from(n + 1, 0);
  best[0] = 0;
  for (size_t j = 1; j <= n; ++j) {
    for (size_t i = j; i-- > 0;) {  // the group [i, j): its longest row is the first
      const int64_t rows = static_cast<int64_t>(j - i), padded = rows * longest_first[i];
      if (padded > budget && rows > 1) break;  // longer groups only grow
      const int64_t cost = best[i] + padded + kMicroBatchTokens;
      if (cost < best[j]) best[j] = cost, from[j] = i;
    }
  }
  std::vector<size_t> sizes;
  for (size_t j = n; j > 0; j = from[j]) sizes.push_back(j - from[j]);
  std::reverse(sizes.begin(), sizes.end());
  return sizes;
}

}  // namespace train
