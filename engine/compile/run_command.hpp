// Running a program as a subprocess and collecting what it prints (the compiler, the
// compiler driver's target detection).
#pragma once

#include <string>
#include <vector>

namespace bench {

struct ProcessResult {
  int status = -1;     // exit status, or -1 when killed by a signal or not started
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (looked up in PATH) with extra environment entries ("NAME=value"), in
// `cwd` when given. Throws std::runtime_error when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env_extra = {},
                          const std::string& cwd = {});

}  // namespace bench
