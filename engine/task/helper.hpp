// A short-lived helper process for a task's secrets: the inputs' key and the reference
// (a library or trusted C) exist only in it, never in the evaluation process, whose memory
// every kernel's process starts as a copy of. It writes into memory the caller shared.
#pragma once

#include <functional>
#include <string>

namespace bench {

// Runs `work` in a forked child and waits for it. An exception thrown there, or the
// child's death, comes back as std::runtime_error("cannot " + what + ": " + the reason).
void run_in_helper(const std::function<void()>& work, const std::string& what);

}  // namespace bench
