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

// libtorch's own op on device 0 in single precision (bfloat16 for a bf16 task's op), eager, timed as a CUDA task's
// yardstick the way a kernel is timed (cuda::EventClock): fresh inputs for every call,
// uniform in [-1, 1) and drawn on the GPU before the call starts, TF32 off for the call
// (single precision asked, single precision measured). Per timed call: the events' and
// the wall clock's milliseconds. Throws std::invalid_argument for an unknown op, a missing
// size variable or bad counts; std::runtime_error naming why it cannot run here (no CUDA
// in this libtorch, no driver).
struct Timing {
  std::vector<double> times_ms;
  std::vector<double> wall_ms;
  std::string library;  // "libtorch 2.x.y"
};
Timing time_op(const std::string& op, const Size& size, int warmup, int calls);

}  // namespace cudaref
