#include "evaluator/cuda_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>

#include "cuda/cuda.hpp"
#include "files/clock.hpp"

namespace bench::detail {

using nlohmann::json;

namespace {

[[noreturn]] void serve_in_child(const json& req, int out, double timeout) {
  // Nothing of the evaluation process reaches the driver: its socket to the engine and
  // every other descriptor are closed, the reply's pipe kept.
  if (out > 3) close_range(3, static_cast<unsigned>(out) - 1, 0);
  close_range(static_cast<unsigned>(out) + 1, ~0U, 0);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  rlimit core{0, 0}, cpu{static_cast<rlim_t>(timeout) + 1, static_cast<rlim_t>(timeout) + 2};
  setrlimit(RLIMIT_CORE, &core);
  setrlimit(RLIMIT_CPU, &cpu);
  json reply;
  try {
    if (req.at("op") == "cuda_probe") reply = cuda::probe();
    else reply = cuda::compile(req.at("source").get<std::string>(), req.value("entries", std::vector<std::string>{}));
  } catch (const std::exception& e) {
    reply = {{"status", "runtime_error"}, {"log", e.what()}};
  }
  auto bytes = json::to_cbor(reply);
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = write(out, bytes.data() + at, bytes.size() - at);
    if (n <= 0) _exit(1);
    at += static_cast<size_t>(n);
  }
  _exit(0);
}

json failed(const json& req, const std::string& why) {
  if (req.at("op") == "cuda_probe") return {{"available", false}, {"reason", why}};
  return {{"status", "runtime_error"}, {"log", why}, {"cubin_bytes", 0}, {"compile_ms", 0.0},
          {"entries", json::array()}};
}

}  // namespace

json cuda_in_child(const json& req) {
  const double timeout = req.value("timeout", 60.0);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return failed(req, std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return failed(req, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    serve_in_child(req, fds[1], timeout);
  }
  close(fds[1]);
  std::string in;
  const double deadline = files::monotonic_seconds() + timeout;
  bool late = false;
  for (;;) {
    double left = deadline - files::monotonic_seconds();
    if (left <= 0) {
      late = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[65536];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    in.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  if (late) kill(-pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (late) return failed(req, "the CUDA request took longer than " + std::to_string(int(timeout)) + " s (killed)");
  if (WIFSIGNALED(st))
    return failed(req, std::string("the CUDA request's process was killed by signal ") + std::to_string(WTERMSIG(st)));
  try {
    return json::from_cbor(in);
  } catch (const std::exception&) {
    return failed(req, "the CUDA request's process ended without a reply (exit status " +
                           std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")");
  }
}

}  // namespace bench::detail
