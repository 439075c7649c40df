// Every call of a CUDA run checked, not only the last. A kernel can tell its calls apart (a
// counter in a __device__ global), so a check of one call lets it skip work in the others.
//
// The inputs are drawn by the evaluation process under a key the kernel's process never
// holds (evaluator/cuda_child.cpp); after each call but the last, the kernel's process
// sends that call's outputs back whole, and the evaluation process keeps the values at
// positions it draws under the same key (all of them while every call's fit
// kCheckedValues). When the run has ended, the key goes back with the reply, and the
// engine, where libtorch computes the references, draws each call's inputs again, computes
// its reference and checks the kept values (check_calls). The last call's outputs and
// inputs come back whole, as before, and are checked in full. No driver is needed here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/launch.hpp"
#include "task/keystream.hpp"

namespace cuda {

// The most output values of the calls before the last that the evaluation process keeps
// for the check (4 Mi: 16 MiB of floats in the reply).
constexpr size_t kCheckedValues = size_t{1} << 22;

// Input buffer `arg` (its index among the launch's arguments) of call `call` (warm-up calls
// first, from 0) as the evaluation process draws it under `keys`: uniform in [-1, 1) on a
// grid of 2^-23, each a float exactly; a bf16 buffer's values rounded to the nearest
// bfloat16 (ties to even), the rounded values returned and their bits put in `bits` when
// given.
std::vector<float> draw_input(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg,
                              std::vector<uint16_t>* bits = nullptr);
// The same values as doubles (each equals its float), for a reference: drawn so, not widened
// after.
std::vector<double> draw_input_doubles(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg);

// One call's outputs: their values in all, and their bytes on the device (laid end to end
// in argument order, 4 bytes a float, 2 a bfloat16).
size_t output_values(const Launch& l);
size_t output_bytes(const Launch& l);

// How many output values of each call before the last are checked: all of them when every
// such call's fit kCheckedValues together, else kCheckedValues over the number of calls.
size_t checked_per_call(const Launch& l);

// Which of call `call`'s output values (indices into the outputs laid end to end) are
// checked: empty for all of them in order, else checked_per_call positions drawn under
// `keys` (a stream no input uses), uniform and independent, other ones every call.
std::vector<uint64_t> checked_positions(const bench::Keystream& keys, const Launch& l, int call);

// The checked values of call `call`, from its outputs' bytes as the device held them, as a
// float blob (cuda::float_blob). Throws std::invalid_argument when `raw` is not
// output_bytes(l) long.
nlohmann::json checked_values(const bench::Keystream& keys, const Launch& l, int call, const std::string& raw);

// A task's reference: its outputs for one call's inputs (each buffer's values, in order).
using Reference = std::function<std::vector<std::vector<double>>(const std::vector<std::vector<double>>& inputs)>;

struct CallsCheck {
  bool ok = true;
  int call = 0;            // the first call (1-based) with a value outside the bound; 0 when none
  size_t checked = 0;      // values compared, over every call
  size_t wrong = 0;        // of them outside the bound, in the first call that had any
  double max_error = 0;    // the largest |got - ref| over the calls compared; infinity for a NaN
  size_t at_output = 0;    // where that call's largest error is, 1-based
  size_t at_element = 0;
  std::string log;         // "call 2 of 6: 3 of the 1000 values checked miss ..." when not ok
};

// The calls before the last of a run's record (its call_outputs and input_key, as the
// evaluation process returns them) against `reference`: every value checked within
// atol + rtol |ref|, NaN never (cudaref::check's rule); stops at the first call that
// misses. Throws std::invalid_argument when the record or the reference's shapes do not
// fit the launch.
CallsCheck check_calls(const nlohmann::json& rec, const Launch& l, const Reference& reference, double atol,
                       double rtol);

}  // namespace cuda
