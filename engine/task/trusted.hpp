// Trusted C (a spec's reference, a library's yardstick) compiled with gcc -O2 and loaded
// into the calling process: only ever a helper or a reference child, never the
// evaluation process or a kernel's.
#pragma once

#include <string>
#include <vector>

#include "task/spec.hpp"
#include "task/task.hpp"

namespace bench {

// Compiles `source` into a shared object linked against `libs` (-lNAME), loads it and
// returns its handle; `entry` must be defined. Throws with the compiler's output, naming
// `what` ("the reference of task 'axpy'").
void* load_trusted(const std::string& what, const std::string& source, const std::vector<std::string>& libs,
                   const std::string& entry);

// A yardstick loaded for `threads` threads: the thread variables set before the library
// loads, its yardstick_init(threads) called, its yardstick_version() read.
Yardstick load_yardstick(const YardstickSource& y, const std::string& entry, int threads, const std::string& task);

}  // namespace bench
