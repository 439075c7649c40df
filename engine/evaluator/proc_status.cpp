#include "evaluator/proc_status.hpp"

#include <dirent.h>
#include <signal.h>

#include <cstdint>
#include <fstream>

#include "kernel_child/child.hpp"

namespace bench::detail {

int thread_count(pid_t pid) {
  int n = 0;
  if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// The state letter of each thread of `pid` ("pid (comm) S ...": it follows the last ')',
// since a name may hold one); none when the process is gone.
static std::string thread_states(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::string states;
  DIR* d = opendir(dir.c_str());
  if (!d) return states;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size()) states += line[close + 2];
  }
  closedir(d);
  return states;
}

bool any_thread_running(pid_t pid) { return thread_states(pid).find('R') != std::string::npos; }

bool all_threads_held(pid_t pid) {
  return thread_states(pid).find_first_not_of("TtDZX") == std::string::npos;
}

std::string foreign_handlers(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  uint64_t mask = 0;
  for (std::string line; std::getline(status, line);)
    if (line.rfind("SigCgt:", 0) == 0) mask = std::stoull(line.substr(7), nullptr, 16);
  uint64_t ours = 0;
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT, SIGTRAP, 32, 33}) ours |= uint64_t(1) << (s - 1);
  std::string out;
  for (int s = 1; s <= 64; ++s)
    if ((mask & ~ours) & (uint64_t(1) << (s - 1))) out += (out.empty() ? "" : ", ") + signal_name(s);
  return out;
}

}  // namespace bench::detail
