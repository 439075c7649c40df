#include "evaluator/cuda_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cuda/cuda.hpp"
#include "cuda/launch.hpp"
#include "evaluator/cuda_sandbox.hpp"
#include "evaluator/verdict.hpp"
#include "files/clock.hpp"
#include "task/keystream.hpp"

namespace bench::detail {

using nlohmann::json;

namespace {

// Reads exactly n bytes; false at the end of the pipe or an error.
bool read_all(int fd, void* dst, size_t n) {
  auto* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Every descriptor but `keep` (ascending) closed.
void close_all_but(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int fd : keep) {
    if (static_cast<unsigned>(fd) > from) close_range(from, static_cast<unsigned>(fd) - 1, 0);
    from = std::max(from, static_cast<unsigned>(fd) + 1);
  }
  close_range(from, ~0U, 0);
}

[[noreturn]] void serve_in_child(const json& req, int out, int in, double timeout) {
  // Nothing of the evaluation process reaches the driver: its socket to the engine and
  // every other descriptor are closed, the reply's pipe (and the inputs' pipe) kept.
  close_all_but(in >= 0 ? std::vector<int>{out, in} : std::vector<int>{out});
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  rlimit core{0, 0}, cpu{static_cast<rlim_t>(timeout) + 1, static_cast<rlim_t>(timeout) + 2};
  setrlimit(RLIMIT_CORE, &core);
  setrlimit(RLIMIT_CPU, &cpu);
  json reply;
  try {
    const std::string op = req.at("op");
    if (!confine_cuda_child()) {
      reply = {{"status", "runtime_error"}, {"log", "the CUDA child's seccomp filter could not be installed"},
               {"available", false}, {"reason", "the CUDA child's seccomp filter could not be installed"}};
    } else if (op == "cuda_sandbox") {
      reply = cuda_sandbox_probe();
    } else if (op == "cuda_probe") {
      reply = cuda::probe();
    } else if (op == "cuda_run") {
      auto read_inputs = [in](int, size_t, void* dst, size_t bytes) { return read_all(in, dst, bytes); };
      reply = cuda::run(req.at("source").get<std::string>(), req.at("launch"), read_inputs);
    } else {
      reply = cuda::compile(req.at("source").get<std::string>(), req.value("entries", std::vector<std::string>{}));
    }
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

// `v` rounded to the nearest bfloat16 (ties to even; v is finite): its bits, and its value.
float to_bf16(float v, uint16_t& bits) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>(u >> 16);
  u = uint32_t{bits} << 16;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

json failed(const json& req, const std::string& why) {
  if (req.at("op") == "cuda_probe") return {{"available", false}, {"reason", why}};
  return {{"status", "runtime_error"}, {"log", why}, {"cubin_bytes", 0}, {"compile_ms", 0.0},
          {"entries", json::array()}};
}

// A run's inputs, drawn here, in the process that asked, call by call as the pipe takes
// them: under a key drawn after the fork (or a launch's fixed seed), so the kernel's
// process never holds the key and no call's values tell another's. Keeps the last call's,
// the ones its outputs are checked against.
class InputFeed {
 public:
  explicit InputFeed(const cuda::Launch& l)
      : launch_(l), keys_(l.seeded ? Keystream::seeded(l.seed) : Keystream::random()) {}

  // The bytes still to send now; empty when every call's inputs are sent.
  bool next(const char*& data, size_t& size) {
    while (at_ >= chunk_.size()) {
      if (!advance()) return false;
    }
    data = chunk_.data() + at_;
    size = chunk_.size() - at_;
    return true;
  }
  void sent(size_t n) { at_ += n; }
  const std::vector<std::vector<float>>& last_call() const { return last_; }

 private:
  // The next input buffer's values, as bytes.
  bool advance() {
    const int total = launch_.warmup + launch_.calls;
    for (;;) {
      if (call_ >= total) return false;
      if (arg_ >= launch_.args.size()) {
        ++call_;
        arg_ = 0;
        continue;
      }
      const cuda::LaunchArg& a = launch_.args[arg_];
      const size_t arg = arg_++;
      if (a.kind != cuda::LaunchArg::input) continue;
      std::vector<double> unit(a.count);
      keys_.fill_signed_unit(static_cast<uint32_t>(call_), static_cast<uint32_t>(arg), unit.data(), a.count);
      std::vector<float> values(a.count);
      // 24 bits a value, below 1: each is a float exactly, in [-1, 1)
      for (size_t i = 0; i < a.count; ++i) values[i] = static_cast<float>(std::floor(unit[i] * 8388608.0) / 8388608.0);
      if (a.bf16) {  // rounded to bfloat16, and the rounded values kept for the reference
        std::vector<uint16_t> half(a.count);
        for (size_t i = 0; i < a.count; ++i) values[i] = to_bf16(values[i], half[i]);
        chunk_.assign(reinterpret_cast<const char*>(half.data()), a.count * sizeof(uint16_t));
      } else {
        chunk_.assign(reinterpret_cast<const char*>(values.data()), a.count * sizeof(float));
      }
      at_ = 0;
      if (call_ == total - 1) last_.push_back(std::move(values));
      return true;
    }
  }

  const cuda::Launch launch_;
  Keystream keys_;
  int call_ = 0;
  size_t arg_ = 0;
  std::string chunk_;
  size_t at_ = 0;
  std::vector<std::vector<float>> last_;
};

}  // namespace

json cuda_in_child(const json& req) {
  const double timeout = req.value("timeout", 60.0);
  const bool run = req.at("op") == "cuda_run";
  std::optional<InputFeed> feed;
  if (run) {
    try {
      feed.emplace(cuda::parse_launch(req.at("launch")));
    } catch (const std::exception& e) {
      return failed(req, std::string("the launch: ") + e.what());
    }
  }
  int fds[2], in_fds[2] = {-1, -1};
  if (pipe2(fds, O_CLOEXEC) != 0) return failed(req, std::string("pipe: ") + std::strerror(errno));
  if (run && pipe2(in_fds, O_CLOEXEC) != 0) {
    close(fds[0]);
    close(fds[1]);
    return failed(req, std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], in_fds[0], in_fds[1]})
      if (fd >= 0) close(fd);
    return failed(req, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    if (run) close(in_fds[1]);
    serve_in_child(req, fds[1], in_fds[0], timeout);
  }
  close(fds[1]);
  int feed_fd = -1;
  if (run) {
    close(in_fds[0]);
    feed_fd = in_fds[1];
    fcntl(feed_fd, F_SETFL, O_NONBLOCK);
  }
  std::string in;
  const double deadline = files::monotonic_seconds() + timeout;
  bool late = false;
  for (;;) {
    double left = deadline - files::monotonic_seconds();
    if (left <= 0) {
      late = true;
      break;
    }
    const char* data = nullptr;
    size_t size = 0;
    if (feed_fd >= 0 && !feed->next(data, size)) {  // every input sent
      close(feed_fd);
      feed_fd = -1;
    }
    pollfd p[2] = {{fds[0], POLLIN, 0}, {feed_fd, POLLOUT, 0}};
    int n = poll(p, feed_fd >= 0 ? 2 : 1, static_cast<int>(std::ceil(left * 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    if (feed_fd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = write(feed_fd, data, size);
      if (put > 0) feed->sent(static_cast<size_t>(put));
      else if (put < 0 && errno != EAGAIN && errno != EINTR) {  // the child stopped reading
        close(feed_fd);
        feed_fd = -1;
      }
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    in.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  if (feed_fd >= 0) close(feed_fd);
  if (late) kill(-pid, SIGKILL);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (late) return failed(req, "the CUDA request took longer than " + std::to_string(int(timeout)) + " s (killed)");
  if (WIFSIGNALED(st))
    return failed(req, std::string("the CUDA request's process was killed by signal ") + std::to_string(WTERMSIG(st)));
  json reply;
  try {
    reply = json::from_cbor(in);
  } catch (const std::exception&) {
    return failed(req, "the CUDA request's process ended without a reply (exit status " +
                           std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")");
  }
  if (run && reply.contains("outputs")) {
    json inputs = json::array();
    for (const auto& values : feed->last_call()) inputs.push_back(cuda::float_blob(values.data(), values.size()));
    reply["inputs"] = std::move(inputs);
    const auto times = reply.at("times_ms").get<std::vector<double>>();  // the CPU kernels' statistics
    reply["median_ms"] = median(times);
    reply["cov"] = coefficient_of_variation(times);
  }
  return reply;
}

}  // namespace bench::detail
