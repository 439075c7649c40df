// The one clock spans are measured by, in every process of the engine (the engine, the
// evaluation process, a kernel's child, a benchmark worker): CLOCK_MONOTONIC, in seconds.
#pragma once

#include <time.h>

namespace files {

inline double monotonic_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace files
