// The references of CUDA tasks: what a task's outputs must be, computed by libtorch's ops
// on the CPU in double precision from the inputs the harness drew (row-major, as the
// kernel saw them). A task's spec names its op; each op's inputs, outputs and size
// variables are fixed here.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cudaref {

using Size = std::map<std::string, long long>;
using Buffers = std::vector<std::vector<double>>;

// The ops, each with what it takes: "softmax_rows: x[rows, cols] -> y[rows, cols]".
std::vector<std::string> ops();

// The outputs of `op` for `inputs` at `size`. Throws std::invalid_argument naming the
// problem: an unknown op, a missing size variable, an input of the wrong length.
Buffers compute(const std::string& op, const Size& size, const Buffers& inputs);

}  // namespace cudaref
