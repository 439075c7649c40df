// The engine's side of an evaluation: options checked and resolved for this node, the
// evaluation process (engine-sandbox, engine/evaluator) started and sent each batch over
// wire/frames.hpp. Nothing is timed here: that process times every call of a kernel.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "cuda/launch.hpp"
#include "task/task.hpp"
#include "wire/blobs.hpp"
#include "wire/frames.hpp"
#include "wire/options.hpp"

namespace bench {

namespace {

std::mutex g_mu;  // one request at a time on the socket
int g_sock = -1;
pid_t g_pid = -1;

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// Ends the evaluation process (it exits when its socket closes; killed after 2 s) and
// says how it ended.
std::string reap_zygote() {
  if (g_pid <= 0) return "";
  close(g_sock);
  int st = 0;
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    pid_t p = waitpid(g_pid, &st, WNOHANG);
    gone = p == g_pid || (p < 0 && errno != EINTR);
    if (!gone) usleep(10 * 1000);
  }
  if (!gone) {
    kill(g_pid, SIGKILL);
    while (waitpid(g_pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  g_sock = g_pid = -1;
  if (WIFSIGNALED(st)) return std::string("killed by ") + sigabbrev_np(WTERMSIG(st));
  return "exit status " + std::to_string(WEXITSTATUS(st));
}

void start_locked() {
  if (g_pid > 0) return;
  // Everything the child needs before exec is made here: after fork it may only make
  // async-signal-safe calls (the engine may be running threads by now).
  const std::string program = sandbox_program();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error(std::string("bench: socketpair: ") + std::strerror(errno));
  const std::string fd_arg = "3", engine_arg = std::to_string(getpid());
  const char* argv[] = {program.c_str(), "--serve", fd_arg.c_str(), engine_arg.c_str(), nullptr};
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    throw std::runtime_error(std::string("bench: cannot fork the evaluation process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // fd 3 without close-on-exec, everything else closed by exec.
    if (sv[1] == 3) fcntl(3, F_SETFD, 0);
    else dup2(sv[1], 3);
    // Nor anything inherited without close-on-exec (an MPI library's sockets and shared
    // memory): the evaluation process holds its socket and nothing else of the engine's.
    close_range(4, ~0U, 0);
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  close(sv[1]);
  g_sock = sv[0];
  g_pid = pid;
  std::string hello;
  if (!detail::read_frame(g_sock, hello) || hello != detail::kReady) {
    std::string how = reap_zygote();
    throw std::runtime_error("bench: the evaluation program " + program + " did not start (" + how + ")");
  }
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] { reap_zygote(); });
  }
}

bool round_trip(const std::string& out, std::string& in) {
  return detail::write_frame(g_sock, out) && detail::read_frame(g_sock, in);
}

nlohmann::json request(const nlohmann::json& req) {
  std::lock_guard lock(g_mu);
  // CBOR, not JSON text: sources and diagnostics travel byte for byte, even when they
  // are not valid UTF-8; a CUDA run's buffers beside it (wire/blobs.hpp).
  const std::string out = wire::pack(req);
  std::string in;
  start_locked();
  if (!round_trip(out, in)) {
    // A crash of the evaluation process is a bug of ours, not the kernels': say so, and
    // go on with a fresh one. A request that kills it twice is reported.
    std::string how = reap_zygote();
    std::fprintf(stderr, "bench: the evaluation process ended (%s); starting a new one\n", how.c_str());
    start_locked();
    if (!round_trip(out, in)) {
      how = reap_zygote();
      throw std::runtime_error("bench: the evaluation process ended twice on this request (" + how + ")");
    }
  }
  auto reply = wire::unpack(in);
  if (reply.contains("error")) throw std::runtime_error("bench: " + reply["error"].get<std::string>());
  return reply;
}

}  // namespace

void start_zygote() {
  std::lock_guard lock(g_mu);
  start_locked();
}

bool zygote_started() { return g_pid > 0; }
int zygote_pid() { return g_pid; }

std::string sandbox_program() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("ENGINE_SANDBOX"); env && *env) {
    if (executable(env)) return env;
    throw std::runtime_error(std::string("bench: ENGINE_SANDBOX=") + env + " is not an executable program");
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    tried.push_back(dir + "/engine-sandbox");
    if (executable(tried.back())) return tried.back();
  }
#ifdef ENGINE_SANDBOX_BUILT
  tried.push_back(ENGINE_SANDBOX_BUILT);
  if (executable(tried.back())) return tried.back();
#endif
  std::string where;
  for (const auto& t : tried) where += (where.empty() ? "" : ", ") + t;
  throw std::runtime_error("bench: cannot find the evaluation program engine-sandbox (looked for " + where +
                           "); set ENGINE_SANDBOX to its path");
}


namespace {

// Every check of the options; the problem's task, which the last one makes.
std::unique_ptr<Task> checked_task(const EvalOptions& o) {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (!optimisation_level_known(o.opt)) bad(optimisation_level_message(o.opt));
  const std::string backend = o.backend.empty() ? default_backend() : o.backend;
  if (!find_backend(backend)) {
    std::string names;
    for (const auto& n : backend_names()) names += (names.empty() ? "" : ", ") + n;
    bad("backend: unknown back end '" + backend + "' (available: " + names + ")");
  }
  if (o.threads < 0 || o.threads > 4096) bad("threads must be between 1 and 4096 (0: all cores)");
  if (o.warmup < 0 || o.warmup > 1000) bad("warmup must be between 0 and 1000");
  if (o.runs < 1 || o.runs > 10000) bad("runs must be between 1 and 10000");
  if (!(o.timeout > 0 && o.timeout <= 3600)) bad("timeout must be more than 0 and at most 3600 seconds");
  if (!(o.compile_timeout > 0 && o.compile_timeout <= 3600))
    bad("compile_timeout must be more than 0 and at most 3600 seconds");
  if (o.memory_mb < 16 || o.memory_mb > (int64_t(1) << 22)) bad("memory_mb must be between 16 and 4194304");
  if (!known_verify_mode(o.verify))
    bad("verify must be \"fp64\" (every element, double-precision error bound) or \"paper\" (105 points, "
        "relative error 1e-6), got '" + o.verify + "'");
  if (o.max_runs < 0 || o.max_runs > 10000) bad("max_runs must be between 0 and 10000");
  if (o.pool < 1 || o.pool > 4096) bad("pool must be between 1 and 4096");
  if (!(o.cov_target >= 0 && o.cov_target <= 10)) bad("cov_target must be between 0 and 10");
  if (o.warmup + std::max(o.runs, o.max_runs) > 64)
    bad("warmup + runs (or max_runs) must be at most 64: every call gets inputs of its own");
  auto task = make_task(o.problem);  // checks the problem
  auto modes = task->verify_modes();
  if (std::find(modes.begin(), modes.end(), o.verify) == modes.end())
    bad("verify: \"" + o.verify + "\" is not a check of " + task->describe() + " (it is checked by \"" +
        modes.front() + "\")");
  if (!o.yardstick.empty()) {
    auto names = task->yardsticks();
    if (std::find(names.begin(), names.end(), o.yardstick) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      bad("yardstick: " + task->describe() + " has no yardstick '" + o.yardstick + "' (it has " + known + ")");
    }
  }
  return task;
}

}  // namespace

void check_options(const EvalOptions& o) { checked_task(o); }

// The options resolved for this node, for a task checked from them already.
static nlohmann::json resolved_for(const EvalOptions& o, const Task& task) {
  ResolvedOptions r;
  static_cast<EvalOptions&>(r) = o;
  r.march_flags = resolve_march(o.march);
  r.march = join_flags(r.march_flags);
  r.backend = o.backend.empty() ? default_backend() : o.backend;
  r.threads = o.threads ? o.threads : machine().cores;
  r.max_runs = std::max(o.runs, o.max_runs);
  r.problem = task.options();
  return r.to_json();
}

nlohmann::json resolve_options(const EvalOptions& o) { return resolved_for(o, *checked_task(o)); }

namespace {

template <class T>
void read_field(const nlohmann::json& v, T& out) { out = v.get<T>(); }
void read_field(const nlohmann::json& v, std::optional<double>& out) {
  const double e = v.get<double>();
  out = e >= 1e308 ? HUGE_VAL : e;  // JSON has no infinity
}
void read_field(const nlohmann::json& v, std::optional<size_t>& out) { out = v.get<size_t>(); }

}  // namespace

// A record as a Result; a record that does not keep to its declaration is refused.
Result result_from_record(const nlohmann::json& j) {
  const std::string problem = check_result_record(j);
  if (!problem.empty()) throw std::runtime_error("the evaluation's record: " + problem);
  Result r;
#define ENGINE_RESULT_READ(name, kind, type, kept, meaning) \
  if (j.contains(#name)) read_field(j.at(#name), r.name);
  ENGINE_RESULT_FIELDS(ENGINE_RESULT_READ)
#undef ENGINE_RESULT_READ
  return r;
}

namespace {

nlohmann::json reference_with(const nlohmann::json& resolved) {
  nlohmann::json req = {{"op", "reference"}, {"options", resolved}, {"parallel", 1},
                        {"peak_gflops", machine().peak_gflops}, {"peak_gbps", machine().peak_gbps}};
  return request(req).at("results").at(0);
}

}  // namespace

nlohmann::json evaluate_records(const std::vector<std::string>& sources, const EvalOptions& opts) {
  auto resolved = resolve_options(opts);
  if (sources.empty()) return nlohmann::json::array();
  nlohmann::json req = {{"op", "evaluate"}, {"options", resolved}, {"sources", sources},
                        {"parallel", machine().cores}, {"peak_gflops", machine().peak_gflops}, {"peak_gbps", machine().peak_gbps}};
  return request(req).at("results");
}

nlohmann::json cuda_probe() { return request({{"op", "cuda_probe"}, {"timeout", 60.0}}); }
nlohmann::json cuda_sandbox(size_t print_bytes) {
  return request({{"op", "cuda_sandbox"}, {"print_bytes", print_bytes}, {"timeout", 60.0}});
}

nlohmann::json cuda_compile(const std::string& source, const std::vector<std::string>& entries, double timeout) {
  if (!(timeout > 0 && timeout <= 3600)) throw std::invalid_argument("timeout must be more than 0 and at most 3600 seconds");
  return request({{"op", "cuda_compile"}, {"source", source}, {"entries", entries}, {"timeout", timeout}});
}

// The threads that draw a CUDA run's inputs and keep its checked values. The next call's
// inputs are drawn while the GPU runs this one, so a core is left to the child whose
// thread records the events around the launch.
static int cuda_draw_threads() { return std::max(1, machine().cores - 1); }

nlohmann::json cuda_run(const std::string& source, const nlohmann::json& launch, double timeout) {
  if (!(timeout > 0 && timeout <= 3600)) throw std::invalid_argument("timeout must be more than 0 and at most 3600 seconds");
  cuda::parse_launch(launch);  // a malformed launch is the caller's error, named here
  return request({{"op", "cuda_run"}, {"source", source}, {"launch", launch}, {"timeout", timeout},
                  {"parallel", cuda_draw_threads()}});
}

nlohmann::json cuda_batch(const nlohmann::json& items, double timeout) {
  if (!(timeout > 0 && timeout <= 3600)) throw std::invalid_argument("timeout must be more than 0 and at most 3600 seconds");
  if (!items.is_array()) throw std::invalid_argument("the batch's items must be a list");
  nlohmann::json sent = nlohmann::json::array();
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const std::string where = "item " + std::to_string(i + 1) + ": ";
    const std::string op = item.is_object() ? item.value("op", "") : "";
    if (op == "cuda_run") {
      if (!item.contains("source") || !item["source"].is_string()) throw std::invalid_argument(where + "no source");
      try {
        cuda::parse_launch(item.value("launch", nlohmann::json()));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(where + e.what());
      }
      sent.push_back({{"op", op}, {"source", item["source"]}, {"launch", item["launch"]}});
    } else if (op == "cuda_sandbox") {
      const double print_bytes = item.value("print_bytes", 0.0), spin_ms = item.value("spin_ms", 0.0);
      if (!(print_bytes >= 0 && print_bytes <= (1 << 24) && spin_ms >= 0 && spin_ms <= 1e6))
        throw std::invalid_argument(where + "print_bytes from 0 to 16 Mi, spin_ms from 0 to 10^6");
      sent.push_back({{"op", op}, {"print_bytes", static_cast<size_t>(print_bytes)}, {"spin_ms", spin_ms}});
    } else {
      throw std::invalid_argument(where + "op must be cuda_run or cuda_sandbox");
    }
  }
  if (sent.empty()) return sent;
  return request({{"op", "cuda_batch"}, {"items", sent}, {"timeout", timeout}, {"parallel", cuda_draw_threads()}})
      .at("results");
}

void cuda_release() {
  if (zygote_started()) request({{"op", "cuda_release"}});
}

std::vector<Result> evaluate_batch(const std::vector<std::string>& sources, const EvalOptions& opts) {
  std::vector<Result> out;
  for (const auto& r : evaluate_records(sources, opts)) out.push_back(result_from_record(r));
  return out;
}

Result evaluate(const std::string& source, const EvalOptions& opts) {
  return evaluate_batch({source}, opts).at(0);
}

// One yardstick at its fastest thread count (or at opts.threads): speed against thread
// count rises to one summit, so the search stops past it. Trials are appended to `trials`.
static nlohmann::json fastest_threads(nlohmann::json resolved, const EvalOptions& opts, nlohmann::json& trials) {
  nlohmann::json best;
  for (int threads = opts.threads > 0 ? opts.threads : machine().cores; threads >= 1; threads /= 2) {
    resolved["threads"] = threads;
    nlohmann::json r = reference_with(resolved);
    nlohmann::json trial = {{"yardstick", resolved.value("yardstick", "")}, {"threads", threads},
                            {"status", r.at("status")}};
    if (r.at("status") != "ok") {
      trial["message"] = r.value("message", "");
      trials.push_back(std::move(trial));
      return r;
    }
    trial.update({{"min", r.value("min", 0.0)}, {"median", r.value("median", 0.0)}, {"cov", r.value("cov", 0.0)}});
    trials.push_back(std::move(trial));
    if (best.is_null() || r.value("median", 0.0) < best.value("median", 0.0)) best = std::move(r);
    else break;
    if (opts.threads > 0) break;
  }
  return best;
}

// The task's yardstick: the one named, or the fastest of them by the median call; a
// library missing on this machine is a failed trial, not an error, while another works.
nlohmann::json reference_record(const EvalOptions& opts) {
  auto task = checked_task(opts);
  std::vector<std::string> names = opts.yardstick.empty() ? task->yardsticks() : std::vector<std::string>{opts.yardstick};
  nlohmann::json resolved = resolved_for(opts, *task);  // the task checked once
  nlohmann::json best, failed, trials = nlohmann::json::array();
  for (const auto& name : names) {
    resolved["yardstick"] = name;
    nlohmann::json r = fastest_threads(resolved, opts, trials);
    if (r.at("status") != "ok") {
      if (failed.is_null()) failed = std::move(r);
      continue;
    }
    if (best.is_null() || r.value("median", 0.0) < best.value("median", 0.0)) best = std::move(r);
  }
  if (best.is_null()) best = std::move(failed);
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& t : trials)
    if (t.at("yardstick") == best.value("library", "") && t.at("status") == "ok") threads.push_back(t);
  if (opts.threads == 0) best["thread_trials"] = std::move(threads);  // a search's only
  best["yardstick_trials"] = std::move(trials);
  return best;
}

Result reference(const EvalOptions& opts) { return result_from_record(reference_record(opts)); }

}  // namespace bench
