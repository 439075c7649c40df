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

bool any_thread_running(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  bool running = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) S ...": the state follows the last ')' (a name may hold one)
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') running = true;
  }
  closedir(d);
  return running;
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
