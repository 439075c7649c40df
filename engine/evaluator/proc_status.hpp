// Inside engine/evaluator only: what the zygote reads of a stopped kernel's process.
#pragma once

#include <sys/types.h>

#include <string>

namespace bench::detail {

// Threads of process `pid` (its /proc/PID/task entries).
int thread_count(pid_t pid);

// Whether a thread of process `pid` is running or runnable (state R in /proc).
bool any_thread_running(pid_t pid);

// Whether every thread of process `pid` is stopped (T) or in an uninterruptible wait (D: a
// process whose vfork child has not yet run its exec, which a stop does not stop): none runs
// or will before it is continued. A sleeping thread (S) with a stop pending is not yet,
// since it runs to take the stop. True once the process is gone.
bool all_threads_held(pid_t pid);

// Signals `pid` catches besides the sandbox's fault handlers and glibc's own (32, 33),
// by name ("SIGUSR1, SIGALRM"); "" when none.
std::string foreign_handlers(pid_t pid);

}  // namespace bench::detail
