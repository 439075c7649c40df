// Helpers shared by the evaluation's tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/bench.hpp"

namespace bench_test {

std::string read_file(const std::string& path);
// "/* expect: STATUS | key: value ... */" on the first line -> STATUS; "" when absent.
// A kernel with AVX-512 intrinsics that would compile is a compile_error on a target
// without AVX-512 (bench::machine().simd).
std::string expected_status(const std::string& source);
// The text after "message:" on the first line, up to " */" or the next " | ".
std::string expected_message(const std::string& source);
// Sorted *.c files in dir; fails the test (not skips) when dir is missing.
std::vector<std::string> kernel_files(const std::string& dir);
// The engine's own back ends (gcc, gccjit), without the tests' misbehaving ones.
std::vector<std::string> engine_backends();
// Evaluates source with opts through each of engine_backends() and hands each result to
// check, with "LABEL via BACKEND: STATUS: MESSAGE" ("BACKEND: ..." without a label) as
// Catch's INFO for its checks: one verdict asked of every back end.
void each_backend(const std::string& source, bench::EvalOptions opts,
                  const std::function<void(const bench::Result&)>& check, const std::string& label = "");
// Processes whose parent is pid.
std::vector<int> children_of(int pid);
// The working tree of the evaluation process `pid` (the directory of the lock it holds),
// "" when it holds none.
std::string zygote_root(int pid);
// Entries of /tmp (or TMPDIR) whose names start with prefix.
std::vector<std::string> temp_entries(const std::string& prefix);

}  // namespace bench_test
