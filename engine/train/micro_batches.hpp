#pragma once
// Where an SFT step's rows, sorted longest first, are cut into micro-batches under a token
// budget (rows x the longest row, padding included). Torch-free.
#include <cstdint>
#include <vector>

namespace train {

// What a micro-batch costs beside its padded tokens, in tokens: the launches and passes a
// micro-batch adds (least_padding's trade between fewer cuts and less padding). A guess, not
// yet measured: sft_step_bench.sh's least-padding way on the GPU is what tells.
constexpr int64_t kMicroBatchTokens = 8192;

// Sizes of consecutive groups: each filled in order until one more row would pass the budget.
std::vector<size_t> fill_cuts(const std::vector<int64_t>& longest_first, int64_t budget);

// Sizes of consecutive groups within the budget whose padded tokens plus kMicroBatchTokens a
// group are the fewest (exact, by dynamic programming over the cut points). A row longer
// than the budget is a group of its own.
std::vector<size_t> least_padding_cuts(const std::vector<int64_t>& longest_first, int64_t budget);

}  // namespace train
