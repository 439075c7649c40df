// A CUDA kernel's launch as the harness makes it: the entry, the grid, and each argument
// (a buffer the harness fills, a buffer the kernel writes, or a scalar). Parsed and checked
// in any process; no driver is needed here. The inputs' values are not the launch's: the
// process that asks for the run draws them (evaluator/cuda_child.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuda {

struct LaunchArg {
  enum Kind { input, output, int32, float32 } kind;
  size_t count = 0;   // elements of a buffer
  bool bf16 = false;  // a buffer of bfloat16 (2 bytes an element: a float's upper half), else f32
  double value = 0;   // a scalar's value
  size_t bytes() const { return count * (bf16 ? 2 : 4); }
};

struct Launch {
  std::string entry;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<LaunchArg> args;
  int warmup = 1, calls = 5;
  bool seeded = false;  // a fixed seed: known inputs, for debugging; else a key no one holds
  uint64_t seed = 0;
};

// {entry, grid = {x[, y, z]}, block = {...}, shared_bytes, args = {{input = "f32", count},
// {output = "f32", count} (or "bf16"), {int = n}, {float = x}}, warmup, calls, seed}; anything else,
// or a value out of range, throws std::invalid_argument naming it.
Launch parse_launch(const nlohmann::json& j);

}  // namespace cuda
