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
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/calls.hpp"
#include "cuda/cuda.hpp"
#include "cuda/launch.hpp"
#include "evaluator/cuda_sandbox.hpp"
#include "evaluator/verdict.hpp"
#include "files/clock.hpp"
#include "task/keystream.hpp"
#include "wire/blobs.hpp"

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

// Writes all of `n` bytes; false when the pipe is gone.
bool write_all(int fd, const void* src, size_t n) {
  const auto* p = static_cast<const char*>(src);
  while (n > 0) {
    ssize_t put = write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

// What the child sends on the reply's pipe: frames of a tag, an 8-byte length and the bytes.
constexpr char kCallFrame = 'c';   // one earlier call's outputs as the device held them
constexpr char kReplyFrame = 'r';  // the record (a packed message, wire/blobs.hpp), last
constexpr char kGoFrame = 'g';     // the warm child: the kernel is loaded, its inputs may come
constexpr size_t kFrameHeader = 1 + sizeof(uint64_t);

bool write_frame(int fd, char tag, const void* bytes, size_t n) {
  char head[kFrameHeader];
  head[0] = tag;
  const uint64_t len = n;
  std::memcpy(head + 1, &len, sizeof len);
  return write_all(fd, head, sizeof head) && write_all(fd, bytes, n);
}

// What a CUDA child prints (a kernel's device printf, which the driver writes to the
// child's stdout; anything on its stderr) is kept in the record, never passed on: the first
// kPrintedKept bytes, made printable.
constexpr size_t kPrintedKept = 4096;

std::string printable(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (!(u == '\n' || u == '\t' || (u >= 0x20 && u < 0x7F))) c = '?';
  }
  return out;
}

// A CUDA child's first steps, before the filter. What it prints goes to the evaluation
// process's capture, not to its stdout and stderr (which are the engine's console); nothing
// of the evaluation process reaches the driver: its socket to the engine and every other
// descriptor are closed but `keep` (the child's pipes); its own process group, killed with
// its parent, no new privileges, no core files, `cpu_seconds` of CPU.
void enter_child(int printed, std::vector<int> keep, double cpu_seconds) {
  dup2(printed, STDOUT_FILENO);
  dup2(printed, STDERR_FILENO);
  close_all_but(std::move(keep));
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  rlimit core{0, 0}, cpu{static_cast<rlim_t>(cpu_seconds) + 1, static_cast<rlim_t>(cpu_seconds) + 2};
  setrlimit(RLIMIT_CORE, &core);
  setrlimit(RLIMIT_CPU, &cpu);
}

// What a CUDA child answers to one request (`confined`: whether its filter is in place),
// a run's inputs read through `read_inputs` and its earlier calls' outputs sent as frames.
json answer(const json& req, bool confined, const cuda::InputReader& read_inputs, int out) {
  try {
    const std::string op = req.at("op");
    if (!confined) {
      const char* why = "the CUDA child's seccomp filter could not be installed";
      return {{"status", "runtime_error"}, {"log", why}, {"available", false}, {"reason", why}};
    }
    if (op == "cuda_sandbox") return cuda_sandbox_probe(req.value("print_bytes", size_t{0}), req.value("spin_ms", 0.0));
    if (op == "cuda_probe") return cuda::probe();
    if (op == "cuda_run") {
      auto send_outputs = [out](int, const std::string& bytes) {
        return write_frame(out, kCallFrame, bytes.data(), bytes.size());
      };
      return cuda::run(req.at("source").get<std::string>(), req.at("launch"), read_inputs, send_outputs);
    }
    return cuda::compile(req.at("source").get<std::string>(), req.value("entries", std::vector<std::string>{}));
  } catch (const std::exception& e) {
    return {{"status", "runtime_error"}, {"log", e.what()}};
  }
}

// The reply frame, after what the driver printed through stdio; the child exits when the
// pipe is gone.
void send_reply(int out, json reply) {
  std::fflush(stdout);
  std::fflush(stderr);
  const auto bytes = wire::pack(std::move(reply));
  if (!write_frame(out, kReplyFrame, bytes.data(), bytes.size())) _exit(1);
}

[[noreturn]] void serve_in_child(const json& req, int out, int in, int printed, double timeout) {
  enter_child(printed, in >= 0 ? std::vector<int>{out, in} : std::vector<int>{out}, timeout);
  const bool confined = confine_cuda_child();
  send_reply(out, answer(req, confined, [in](int, size_t, void* dst, size_t bytes) { return read_all(in, dst, bytes); },
                         out));
  _exit(0);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

json failed(const json& req, const std::string& why) {
  if (req.at("op") == "cuda_probe") return {{"available", false}, {"reason", why}};
  return {{"status", "runtime_error"}, {"log", why}, {"cubin_bytes", 0}, {"compile_ms", 0.0},
          {"entries", json::array()}};
}

// A run's inputs, drawn here, in the process that asked, call by call as the pipe takes
// them: under a key drawn after the fork (or a launch's fixed seed), so the kernel's
// process never holds the key and no call's values tell another's. Keeps the last call's,
// which come back whole with its outputs; the key goes back too, after the run, so the
// engine can draw every earlier call's inputs again for their check (cuda/calls.hpp).
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
  const bench::Keystream& keys() const { return keys_; }
  const cuda::Launch& launch() const { return launch_; }

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
      std::vector<uint16_t> half;
      std::vector<float> values = cuda::draw_input(keys_, a, call_, arg, &half);
      if (a.bf16) {  // rounded to bfloat16, and the rounded values kept for the reference
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

// The child's frames as they come (kFrameHeader, then the bytes): each earlier call's
// outputs reduced at once to the values the check keeps, the reply kept whole.
class Frames {
 public:
  // go: the warm child's frames, whose 'g' says the inputs may be sent.
  explicit Frames(const InputFeed* feed, bool go = false) : feed_(feed), go_allowed_(go) {}

  // Takes what was read; false (with why()) when the child sent what it must not.
  bool take(const char* data, size_t n) {
    buf_.append(data, n);
    for (;;) {
      if (buf_.size() - at_ < kFrameHeader) break;
      uint64_t len;
      std::memcpy(&len, buf_.data() + at_ + 1, sizeof len);
      if (buf_.size() - at_ - kFrameHeader < len) break;
      const char tag = buf_[at_];
      const char* body = buf_.data() + at_ + kFrameHeader;
      if (tag == kReplyFrame && !reply_) {
        reply_ = std::string(body, len);
      } else if (tag == kGoFrame && go_allowed_ && !go_ && !reply_ && len == 0) {
        go_ = true;
      } else if (tag == kCallFrame && feed_ && !reply_ &&
                 static_cast<int>(calls_.size()) + 1 < feed_->launch().warmup + feed_->launch().calls) {
        try {
          calls_.push_back(cuda::checked_values(feed_->keys(), feed_->launch(), static_cast<int>(calls_.size()),
                                                std::string(body, len)));
        } catch (const std::exception& e) {
          why_ = e.what();
          return false;
        }
      } else {
        why_ = std::string("the CUDA request's process sent an unexpected frame '") + tag + "'";
        return false;
      }
      at_ += kFrameHeader + len;
    }
    if (at_ > 0) {  // the frames taken are freed; a partial one moves to the front
      buf_.erase(0, at_);
      at_ = 0;
    }
    return true;
  }
  const std::optional<std::string>& reply() const { return reply_; }
  bool go() const { return go_; }
  bool pending() const { return buf_.size() > at_; }  // bytes past the frames taken
  json& calls() { return calls_; }
  const std::string& why() const { return why_; }

 private:
  const InputFeed* feed_;
  bool go_allowed_ = false, go_ = false;
  std::string buf_;
  size_t at_ = 0;
  std::optional<std::string> reply_;
  json calls_ = json::array();
  std::string why_;
};

// What the child prints, read as it comes: the first kPrintedKept bytes kept, the rest
// counted and dropped, so a child printing without end neither blocks nor fills memory.
struct Printed {
  std::string kept;
  size_t bytes = 0;
  // Reads what is there, 256 KiB at most a time (the other pipes wait meanwhile); false at
  // the end of the pipe (or an error).
  bool read_from(int fd) {
    char buf[16384];
    for (int reads = 0; reads < 16; ++reads) {
      ssize_t got = read(fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
      if (got == 0) return false;
      bytes += static_cast<size_t>(got);
      if (kept.size() < kPrintedKept) kept.append(buf, std::min(static_cast<size_t>(got), kPrintedKept - kept.size()));
    }
    return true;
  }
};

// A run's record completed in the process that drew its inputs: the last call's inputs,
// the statistics of the CPU kernels' records, and what the check of every call needs (the
// earlier calls' kept values and the key their inputs are drawn again from, given only
// now that the child that could have used it has answered).
void complete_run(json& reply, const json& req, const InputFeed& feed, Frames& frames) {
  const cuda::Launch& l = feed.launch();
  const int total = l.warmup + l.calls;
  if (static_cast<int>(frames.calls().size()) != total - 1) {
    reply = failed(req, "the CUDA request's process sent the outputs of " + std::to_string(frames.calls().size()) +
                            " calls before the last, not " + std::to_string(total - 1));
    return;
  }
  json inputs = json::array();
  for (const auto& values : feed.last_call()) inputs.push_back(cuda::float_blob(values.data(), values.size()));
  reply["inputs"] = std::move(inputs);
  const auto times = reply.at("times_ms").get<std::vector<double>>();
  reply["median_ms"] = median(times);
  reply["cov"] = coefficient_of_variation(times);
  reply["call_outputs"] = std::move(frames.calls());
  reply["input_key"] = feed.keys().hex();
  reply["checked_calls"] = total;
  reply["checked_per_call"] = cuda::checked_per_call(l);
}

// What ended an exchange with a CUDA child.
enum class Ended { reply, eof, late, bad };

// Talks with a CUDA child until the end of its reply pipe (a lone child, which exits after
// its reply) or, `warm`, until its reply frame (the warm child, which then waits for the
// next request), or the deadline: its inputs written as the pipe takes them (the warm
// child's once it has said 'g'), what it prints read as it comes, its frames taken.
// `feeding` and `printing` are polled until every input is sent (or the child stops
// reading) and until the end of what it prints; the caller closes them.
Ended exchange(int replies, int printing, int feeding, InputFeed* feed, Frames& frames, Printed& printed,
               double deadline, bool warm) {
  for (;;) {
    if (warm && frames.reply()) return Ended::reply;
    const double left = deadline - files::monotonic_seconds();
    if (left <= 0) return Ended::late;
    const char* data = nullptr;
    size_t size = 0;
    const bool may_feed = feeding >= 0 && (!warm || frames.go());
    if (may_feed && !feed->next(data, size)) feeding = -1;  // every input sent
    const bool sending = may_feed && feeding >= 0;
    pollfd p[3] = {{replies, POLLIN, 0}, {printing, POLLIN, 0}, {sending ? feeding : -1, POLLOUT, 0}};
    int n = poll(p, 3, static_cast<int>(std::ceil(left * 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    if (sending && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = write(feeding, data, size);
      if (put > 0) feed->sent(static_cast<size_t>(put));
      else if (put < 0 && errno != EAGAIN && errno != EINTR) feeding = -1;  // the child stopped reading
    }
    if (printing >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !printed.read_from(printing)) {
      printing = -1;  // the child's stdout and stderr are closed: nothing more to read
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    ssize_t got = read(replies, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Ended::eof;
    if (!frames.take(buf, static_cast<size_t>(got))) return Ended::bad;
  }
}

json cuda_in_child(const json& req) {
  const double timeout = req.value("timeout", 60.0);
  const bool run = req.at("op") == "cuda_run";
  std::optional<cuda::Launch> launch;
  if (run) {
    try {
      launch = cuda::parse_launch(req.at("launch"));
    } catch (const std::exception& e) {
      return failed(req, std::string("the launch: ") + e.what());
    }
  }
  int fds[2] = {-1, -1}, in_fds[2] = {-1, -1}, print_fds[2] = {-1, -1};
  auto close_pipes = [&] {
    for (int fd : {fds[0], fds[1], in_fds[0], in_fds[1], print_fds[0], print_fds[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe2(fds, O_CLOEXEC) != 0 || pipe2(print_fds, O_CLOEXEC) != 0 || (run && pipe2(in_fds, O_CLOEXEC) != 0)) {
    const std::string why = std::string("pipe: ") + std::strerror(errno);
    close_pipes();
    return failed(req, why);
  }
  const double forked = files::monotonic_seconds();
  pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::string("fork: ") + std::strerror(errno);
    close_pipes();
    return failed(req, why);
  }
  if (pid == 0) {
    close(fds[0]);
    close(print_fds[0]);
    if (run) close(in_fds[1]);
    serve_in_child(req, fds[1], in_fds[0], print_fds[1], timeout);
  }
  close(fds[1]);
  close(print_fds[1]);
  int print_fd = print_fds[0];
  fcntl(print_fd, F_SETFL, O_NONBLOCK);
  // The inputs' key is drawn now, after the fork: the child's copy of this process never
  // held it.
  std::optional<InputFeed> feed;
  std::string no_key;  // why the key could not be had: the child is then killed unanswered
  if (run) {
    try {
      feed.emplace(*launch);
    } catch (const std::exception& e) {
      no_key = std::string("the inputs' key: ") + e.what();
    }
  }
  int feed_fd = -1;
  if (run) {
    close(in_fds[0]);
    feed_fd = in_fds[1];
    fcntl(feed_fd, F_SETFL, O_NONBLOCK);
  }
  Frames frames(feed ? &*feed : nullptr);
  Printed printed;
  const Ended how = !no_key.empty() ? Ended::bad
                                    : exchange(fds[0], print_fd, feed_fd, feed ? &*feed : nullptr, frames, printed,
                                               files::monotonic_seconds() + timeout, false);
  const bool late = how == Ended::late, bad = how == Ended::bad;
  close(fds[0]);
  if (feed_fd >= 0) close(feed_fd);
  if (late || bad) {
    kill(-pid, SIGKILL);  // its group, and the child itself should it not have made the group yet
    kill(pid, SIGKILL);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  // the child has ended: what it printed last, up to the end of the pipe (a pipe holds
  // 64 KiB: one call reads it all)
  printed.read_from(print_fd);
  close(print_fd);
  json reply;
  if (late) {
    reply = failed(req, "the CUDA request took longer than " + seconds_text(timeout) + " s (killed)");
  } else if (bad) {
    reply = failed(req, no_key.empty() ? frames.why() : no_key);
  } else if (WIFSIGNALED(st)) {
    reply = failed(req, std::string("the CUDA request's process was killed by signal ") + std::to_string(WTERMSIG(st)));
  } else {
    try {
      if (!frames.reply()) throw std::runtime_error("no reply");
      reply = wire::unpack(*frames.reply());
    } catch (const std::exception&) {
      reply = failed(req, "the CUDA request's process ended without a reply (exit status " +
                              std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")");
    }
  }
  if (run && reply.contains("outputs")) complete_run(reply, req, *feed, frames);
  if (reply.is_object() && req.at("op") != "cuda_probe") reply["child_ms"] = 1000 * (files::monotonic_seconds() - forked);
  if (printed.bytes > 0 || run) {
    reply["kernel_output"] = printable(printed.kept);
    reply["kernel_output_bytes"] = printed.bytes;
  }
  return reply;
}


// ---------------------------------------------------------------------------------------
// The warm child: one confined child, one driver and one context for many kernels
// ---------------------------------------------------------------------------------------

namespace {

// The warm child: each request (an 8-byte length and a packed message on
// `requests`) answered as a lone child answers it, in the same context, until the
// requests' pipe ends. Before a run's first call it sends 'g' and only then reads its
// inputs, so a kernel that never runs leaves none of them in the pipe for the next one.
[[noreturn]] void serve_warm_child(int out, int in, int requests, int printed, double cpu_seconds) {
  // Each kernel is bounded by the wall clock in the process that asked; the CPU limit
  // bounds the whole child's host work as a backstop.
  enter_child(printed, {out, in, requests}, cpu_seconds);
  const bool confined = confine_cuda_child();
  for (;;) {
    uint64_t len = 0;
    if (!read_all(requests, &len, sizeof len)) _exit(0);
    std::string bytes(len, '\0');
    if (!read_all(requests, bytes.data(), len)) _exit(0);
    json item;
    try {
      item = wire::unpack(bytes);
    } catch (const std::exception& e) {
      send_reply(out, {{"status", "runtime_error"}, {"log", e.what()}});
      continue;
    }
    bool asked = false;
    auto read_inputs = [&](int, size_t, void* dst, size_t n) {
      if (!asked) {
        asked = true;
        if (!write_frame(out, kGoFrame, "", 0)) return false;
      }
      return read_all(in, dst, n);
    };
    send_reply(out, answer(item, confined, read_inputs, out));
  }
}

// The warm child as the evaluation process holds it.
struct WarmChild {
  pid_t pid = -1;
  int replies = -1, printed = -1, inputs = -1, requests = -1;
};

// The child killed and reaped, what it printed last read into `printed`.
void end_child(WarmChild& c, Printed* printed = nullptr) {
  for (int* fd : {&c.requests, &c.inputs, &c.replies})
    if (*fd >= 0) close(std::exchange(*fd, -1));
  if (c.pid > 0) {
    kill(-c.pid, SIGKILL);  // its group, and the child itself should it not have made the group yet
    kill(c.pid, SIGKILL);
    int st = 0;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  if (c.printed >= 0) {
    if (printed) printed->read_from(c.printed);  // the writer is gone: up to the pipe's end
    close(std::exchange(c.printed, -1));
  }
  c.pid = -1;
}

// A fresh child; "" or why there is none.
std::string start_child(WarmChild& c, double cpu_seconds) {
  int rep[2] = {-1, -1}, in[2] = {-1, -1}, req[2] = {-1, -1}, pr[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {rep[0], rep[1], in[0], in[1], req[0], req[1], pr[0], pr[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe2(rep, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0 || pipe2(req, O_CLOEXEC) != 0 ||
      pipe2(pr, O_CLOEXEC) != 0) {
    const std::string why = std::string("pipe: ") + std::strerror(errno);
    close_all();
    return why;
  }
  pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::string("fork: ") + std::strerror(errno);
    close_all();
    return why;
  }
  if (pid == 0) serve_warm_child(rep[1], in[0], req[0], pr[1], cpu_seconds);
  close(rep[1]);
  close(in[0]);
  close(req[0]);
  close(pr[1]);
  c = {pid, rep[0], pr[0], in[1], req[1]};
  fcntl(c.printed, F_SETFL, O_NONBLOCK);
  fcntl(c.inputs, F_SETFL, O_NONBLOCK);
  return "";
}

// One item asked of the warm child and answered; false when the child must be
// replaced (it failed, timed out, broke the protocol or may hold the item's inputs).
bool ask(WarmChild& c, const json& item, double timeout, json& reply) {
  const bool run = item.at("op") == "cuda_run";
  std::optional<cuda::Launch> launch;
  std::optional<InputFeed> feed;
  try {
    if (run) {
      launch = cuda::parse_launch(item.at("launch"));
      feed.emplace(*launch);  // the key drawn now, after the child's fork
    }
  } catch (const std::exception& e) {
    reply = failed(item, std::string(launch ? "the inputs' key: " : "the launch: ") + e.what());
    return !launch;  // a malformed launch never reached the child
  }
  const double asked = files::monotonic_seconds();
  const auto request = wire::pack(item);
  const uint64_t len = request.size();
  Frames frames(feed ? &*feed : nullptr, true);
  Printed printed;
  const bool sent = write_all(c.requests, &len, sizeof len) && write_all(c.requests, request.data(), request.size());
  const Ended how = !sent ? Ended::eof
                          : exchange(c.replies, c.printed, run ? c.inputs : -1, feed ? &*feed : nullptr, frames,
                                     printed, asked + timeout, true);
  // What a kernel printed before its reply is in the pipe by now: the child flushed it first.
  const bool broken = how != Ended::reply || frames.pending();
  if (broken) end_child(c, &printed);
  else printed.read_from(c.printed);
  bool keep = !broken;
  if (how == Ended::late) {
    reply = failed(item, "the CUDA request took longer than " + seconds_text(timeout) + " s (killed)");
  } else if (how == Ended::bad) {
    reply = failed(item, frames.why());
  } else if (!frames.reply()) {
    reply = failed(item, "the warm CUDA child ended without a reply");
  } else {
    try {
      reply = wire::unpack(*frames.reply());
    } catch (const std::exception&) {
      reply = failed(item, "the warm CUDA child sent a reply that is not a packed message");
      keep = false;
    }
  }
  if (run && reply.contains("outputs")) complete_run(reply, item, *feed, frames);
  const std::string status = reply.is_object() ? reply.value("status", "") : "";
  // A run that began and did not end well may have left the context broken, or its
  // inputs in the pipe; one that failed before it began (no 'g') left the context as it
  // was. Otherwise the next kernel gets a fresh child.
  const bool began = frames.go();
  if (run && !(status == "ok" || (!began && (status == "compile_error" || status == "load_error")))) keep = false;
  const char* rest = nullptr;
  size_t rest_size = 0;
  if (keep && began && feed->next(rest, rest_size)) keep = false;  // inputs it never read
  if (reply.is_object()) {
    reply["child_ms"] = 1000 * (files::monotonic_seconds() - asked);
    reply["kernel_output"] = printable(printed.kept);
    reply["kernel_output_bytes"] = printed.bytes;
  }
  return keep;
}

}  // namespace

// The warm child: kept between requests, so that a script judging kernels one request at
// a time pays for the driver and the context once. It serves kWarmItems items at most (its
// CPU limit covers that many), then a fresh one takes over.
namespace {
constexpr int kWarmItems = 256;
WarmChild warm;
int warm_served = 0;
int warm_children = 0;
}  // namespace

json cuda_batch_in_child(const json& req) {
  const double timeout = req.value("timeout", 60.0);
  json results = json::array();
  for (const json& item : req.at("items")) {
    json reply;
    if (warm.pid > 0 && warm_served >= kWarmItems) end_child(warm);
    if (warm.pid < 0) {
      const std::string why = start_child(warm, timeout * kWarmItems);
      if (!why.empty()) {
        results.push_back(failed(item, why));
        continue;
      }
      warm_served = 0;
      ++warm_children;
    }
    ++warm_served;
    if (!ask(warm, item, timeout, reply)) end_child(warm);
    if (reply.is_object()) reply["cuda_child"] = warm_children;
    results.push_back(std::move(reply));
  }
  return {{"results", std::move(results)}};
}

void end_warm_cuda_child() {
  if (warm.pid < 0) return;
  close(std::exchange(warm.requests, -1));  // the child ends at the requests' end
  const double until = files::monotonic_seconds() + 5;
  int st = 0;
  pid_t got = 0;
  while ((got = waitpid(warm.pid, &st, WNOHANG)) == 0 && files::monotonic_seconds() < until) usleep(1000);
  if (got == warm.pid) warm.pid = -1;  // reaped: nothing left to kill
  end_child(warm);
}

}  // namespace bench::detail
