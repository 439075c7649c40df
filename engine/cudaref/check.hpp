// A CUDA task's outputs against its reference: every element within atol + rtol |ref|,
// NaN never. Plain C++: the engine's judge and its tests use it without libtorch.
#pragma once

#include <cstddef>
#include <string>

#include "cudaref/reference.hpp"

namespace cudaref {

struct Check {
  bool ok = true;
  size_t wrong = 0;        // elements outside the bound
  double max_error = 0;    // the largest |got - ref|; infinity for a NaN
  size_t at_output = 0;    // where it is, 1-based (0: no error at all)
  size_t at_element = 0;
};

// Throws std::invalid_argument when the outputs' count or lengths differ from the
// reference's, naming which.
Check check(const Buffers& outputs, const Buffers& reference, double atol, double rtol);

// "3 of the outputs' values miss the reference by more than 1e-06 + 0 |ref| (the largest
// error 0.5, output 1, element 7)".
std::string describe(const Check& c, double atol, double rtol);

}  // namespace cudaref
