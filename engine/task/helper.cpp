#include "task/helper.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace bench {

void run_in_helper(const std::function<void()>& work, const std::string& what) {
  constexpr size_t kErrorBytes = 4096;
  auto* err = static_cast<char*>(mmap(nullptr, kErrorBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (err == MAP_FAILED) throw std::runtime_error("cannot " + what + ": mmap failed");
  err[0] = 0;
  pid_t pid = fork();
  if (pid < 0) {
    munmap(err, kErrorBytes);
    throw std::runtime_error("cannot " + what + ": fork: " + std::strerror(errno));
  }
  if (pid == 0) {
    try {
      work();
    } catch (const std::exception& ex) {
      std::snprintf(err, kErrorBytes, "%s", ex.what());
      _exit(1);
    }
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  std::string e = err;
  munmap(err, kErrorBytes);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw std::runtime_error("cannot " + what + ": " + (e.empty() ? std::string("the helper process failed") : e));
}

}  // namespace bench
