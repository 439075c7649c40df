// Where an SFT step's rows are cut into micro-batches under a token budget.
#include <catch2/catch.hpp>

#include <numeric>

#include "train/micro_batches.hpp"

using train::fill_cuts;
using train::kMicroBatchTokens;
using train::least_padding_cuts;

namespace {

// Padded tokens of groups of the given sizes, and whether each is within the budget (or one row).
int64_t padded(const std::vector<int64_t>& lengths, const std::vector<size_t>& sizes, int64_t budget, bool& within) {
  int64_t total = 0;
  size_t at = 0;
  within = true;
  for (size_t s : sizes) {
    const int64_t p = static_cast<int64_t>(s) * lengths[at];
    within = within && (p <= budget || s == 1);
    total += p;
    at += s;
  }
  REQUIRE(at == lengths.size());
  return total;
}

}  // namespace

TEST_CASE("filling cuts a micro-batch where one more row would pass the budget") {
  CHECK(fill_cuts({100, 90, 50, 40, 10}, 200) == std::vector<size_t>{2, 3});
  CHECK(fill_cuts({300, 10}, 200) == std::vector<size_t>{1, 1});  // a row above the budget runs alone
  CHECK(fill_cuts({}, 200).empty());
}

TEST_CASE("the least-padding cuts compute fewer padded tokens than filling, each within the budget") {
  // One long row ahead of many short ones: filling puts the short ones under the long row's
  // length; the cheapest cut runs the long row alone.
  std::vector<int64_t> lengths = {1500};
  for (int i = 0; i < 63; ++i) lengths.push_back(600 - 5 * i);
  const int64_t budget = 65536;
  bool within = false;
  const auto fill = fill_cuts(lengths, budget), least = least_padding_cuts(lengths, budget);
  const int64_t fill_cost = padded(lengths, fill, budget, within);
  CHECK(within);
  const int64_t least_cost = padded(lengths, least, budget, within);
  CHECK(within);
  CHECK(least.front() == 1);
  CHECK(least_cost + kMicroBatchTokens * static_cast<int64_t>(least.size()) <=
        fill_cost + kMicroBatchTokens * static_cast<int64_t>(fill.size()));
  CHECK(least_cost < fill_cost * 3 / 4);
  // Rows all alike: nothing to gain by cutting more than the budget asks.
  std::vector<int64_t> alike(64, 512);
  CHECK(least_padding_cuts(alike, budget) == fill_cuts(alike, budget));
  // A row above the budget is a group of its own.
  CHECK(least_padding_cuts({90000, 10, 10}, budget) == std::vector<size_t>{1, 2});
}
