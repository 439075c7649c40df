// Inside engine/evaluator only: what the zygote reads of a stopped kernel's process.
#pragma once

#include <sys/types.h>

#include <string>

namespace bench::detail {

// Threads of process `pid` (its /proc/PID/task entries).
int thread_count(pid_t pid);

// Whether a thread of process `pid` is running or runnable (state R in /proc).
bool any_thread_running(pid_t pid);

// Signals `pid` catches besides the sandbox's fault handlers and glibc's own (32, 33),
// by name ("SIGUSR1, SIGALRM"); "" when none.
std::string foreign_handlers(pid_t pid);

}  // namespace bench::detail
