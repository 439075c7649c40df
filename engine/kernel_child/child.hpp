// A kernel's child process: forked by the evaluation process (engine/evaluator), it
// compiles the kernel (engine/compile), confines itself and makes each call when told.
// Its boundary is the pair of pipes of wire/records.hpp; it times nothing that counts
// (its own clock is a claim the zygote bounds, engine/evaluator/calls.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "task/task.hpp"
#include "wire/records.hpp"

namespace bench::detail {

struct ChildSpec {
  bool reference = false;  // run the task's yardstick instead of compiling
  std::string yardstick;   // which one ("": the task's first)
  std::string source;
  std::string backend;
  CompileOptions copts;
  int threads = 1;
  double timeout = 8;  // all the calls together (the CPU-time backstop)
  int64_t memory_mb = 4096;
  Task* task = nullptr;
  Stage* stage = nullptr;
};

// Runs in the freshly forked child once its descriptors are in place; never returns.
// It first clears the stack below it (bench::clear_stack_below: the checks between calls ran
// on the stack it was forked with).
[[noreturn]] void child_main(const ChildSpec& spec);

// The OpenMP environment a kernel's process (or the library's) runs with, whatever the
// user's shell had: every OMP_*, GOMP_* and KMP_* variable is removed, these are set. The
// result records them.
std::vector<std::string> openmp_environment(int threads, bool reference);

// "SIGSEGV", "SIGSYS", ...
std::string signal_name(int sig);
// The system call's name for a number on this architecture.
std::string syscall_name(int nr);

}  // namespace bench::detail
