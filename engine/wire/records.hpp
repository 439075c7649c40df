// The wire between the evaluation process (engine/evaluator) and a kernel's child
// (engine/kernel_child): one-byte commands down a pipe, records up another. Fixed binary
// layouts: the child's signal handlers write them too.
#pragma once

#include <cstdint>

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

// The child's ends of its pipes after set-up.
constexpr int kToZygoteFd = 3, kFromZygoteFd = 4;

}  // namespace bench::detail
