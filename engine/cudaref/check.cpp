#include "cudaref/check.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace cudaref {

Check check(const Buffers& outputs, const Buffers& reference, double atol, double rtol) {
  if (outputs.size() != reference.size())
    throw std::invalid_argument("the run returned " + std::to_string(outputs.size()) + " outputs, the reference " +
                                std::to_string(reference.size()));
  Check c;
  for (size_t o = 0; o < reference.size(); ++o) {
    const auto& got = outputs[o];
    const auto& want = reference[o];
    if (got.size() != want.size())
      throw std::invalid_argument("output " + std::to_string(o + 1) + " has " + std::to_string(got.size()) +
                                  " values, the reference " + std::to_string(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const double err = std::isnan(got[i]) ? std::numeric_limits<double>::infinity() : std::fabs(got[i] - want[i]);
      if (!(err <= atol + rtol * std::fabs(want[i]))) ++c.wrong;
      // the first NaN names the place when nothing finite was worse
      if (err > c.max_error || (std::isinf(err) && c.at_output == 0)) {
        c.max_error = err;
        c.at_output = o + 1;
        c.at_element = i + 1;
      }
    }
  }
  c.ok = c.wrong == 0;
  return c;
}

std::string describe(const Check& c, double atol, double rtol) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu of the outputs' values miss the reference by more than %g + %g |ref| (the largest error %g, "
                "output %zu, element %zu)",
                c.wrong, atol, rtol, c.max_error, c.at_output, c.at_element);
  return buf;
}

}  // namespace cudaref
