// Inside the engine/bench module only: the kernel child's side of the sandbox and the
// records it sends the zygote.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/compiler.hpp"
#include "bench/task.hpp"

namespace bench::detail {

// Child -> zygote records on the result pipe: a header, then `len` bytes.
enum RecordType : uint32_t { kCompiled = 1, kDone = 2, kFault = 3, kPong = 4 };
struct RecordHeader {
  uint32_t type, len;
};
// One call returned: its index (from 0, warm-up calls first) and the child's own
// measurement of it. The zygote trusts the measurement only as far as its own clock
// around the call allows.
struct DoneRecord {
  uint32_t call, pad;
  double seconds;
};
// Zygote -> child commands, one byte each: answer at once (to measure the round trip),
// or make the next call.
// kWake (the library only): its untimed call on the current inputs, answered like a ping,
// so the pool is awake and the inputs cached before the timed command.
constexpr char kPing = 'p', kCall = 'g', kWake = 'w';
// Written by the child's signal handlers (async-signal-safe: a fixed binary layout).
// For a forbidden call that names a file, `text` holds the name; for a forbidden write,
// the start of what was written and `fd` the descriptor (a library reporting an error,
// such as libgomp's failed thread creation). Cut to fit, "" when it could not be read.
struct FaultRecord {
  int32_t sig, code;
  uint64_t addr;
  int32_t syscall_nr, main_thread;
  int32_t fd;
  char text[120];
};

// Compiled kernels waiting for their run at most (the zygote's pool).
constexpr int kMaxWaiting = 32;

// The child's ends of its pipes after set-up.
constexpr int kToZygoteFd = 3, kFromZygoteFd = 4;

struct ChildSpec {
  bool reference = false;  // run the task's library routine instead of compiling
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
