// The zygote's life: single-threaded, holds each problem's inputs and reference, serves
// the engine's requests, forks one child per kernel, compiles in parallel and gives the
// compiled kernels turns, one call each; kills on timeout. What happens in a call, and
// how it is timed and checked, is calls.cpp; the verdict is verdict.cpp's.
#include "evaluator/zygote.hpp"

#include <execinfo.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <sys/random.h>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compile/compiler.hpp"
#include "evaluator/cuda_child.hpp"
#include "evaluator/job.hpp"
#include "evaluator/proc_status.hpp"
#include "evaluator/verdict.hpp"
#include "evaluator/zygote_class.hpp"
#include "files/files.hpp"
#include "kernel_child/child.hpp"
#include "task/between_calls.hpp"
#include "task/task.hpp"
#include "wire/blobs.hpp"
#include "wire/frames.hpp"
#include "wire/records.hpp"

namespace bench::detail {

using nlohmann::json;

namespace {

// A crash of the zygote itself (never a kernel's: those run in children) is a bug of
// ours: say so on the engine's stderr with a backtrace, then die as the signal would.
pid_t g_zygote_pid = 0;

void on_zygote_crash(int sig, siginfo_t* si, void*) {
  signal(sig, SIG_DFL);
  if (getpid() == g_zygote_pid) {
    char line[160];
    int n = std::snprintf(line, sizeof line, "engine: the evaluation zygote crashed: %s at %p; backtrace:\n",
                          sigabbrev_np(sig), si->si_addr);
    ssize_t ignored = write(2, line, static_cast<size_t>(n));
    (void)ignored;
    void* frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
  }
  raise(sig);
}

void install_crash_report() {
  g_zygote_pid = getpid();
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  struct sigaction sa {};
  sa.sa_sigaction = on_zygote_crash;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(s, &sa, nullptr);
}

// What crashed evaluation processes left in the temporary directory: trees whose
// owner's lock is free (this version), and the per-kernel directories of versions that
// named them after a process id that no longer exists.
void sweep_leftovers(const std::string& base) {
  files::sweep_orphans(base, "engine-zygote");
  DIR* dir = opendir(base.c_str());
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, "engine-kernel-", 14) != 0) continue;
    pid_t owner = std::atoi(e->d_name + 14);
    if (owner > 0 && kill(owner, 0) != 0 && errno == ESRCH) files::remove_tree(base + "/" + e->d_name);
  }
  closedir(dir);
}

}  // namespace

void Zygote::exit_now() {
  for (Job* j : live_)
    if (j->pid > 0) kill(-j->pid, SIGKILL);
  root_.remove();
  _exit(0);
}

void Zygote::run() {
  prctl(PR_SET_NAME, "engine-zygote", 0, 0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != engine_) _exit(0);
  install_crash_report();
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // compilers orphaned by a killed child come back here
  // Ctrl-C in the engine's terminal is for the engine; the zygote ends when it does.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) dup2(null, 0);
  // The main stack's range, to recognise a kernel's stack overflow (children share it).
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("[stack]") != std::string::npos) {
      stack_hi_ = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
      rlimit rl{};
      getrlimit(RLIMIT_STACK, &rl);
      rlim_t size = rl.rlim_cur == RLIM_INFINITY ? (rlim_t(1) << 30) : rl.rlim_cur;
      stack_lo_ = stack_hi_ - size - (1 << 20);
    }
  const std::string base = files::temp_base();
  sweep_leftovers(base);
  try {
    root_ = files::OwnedDir(base, "engine-zygote");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine: the evaluation process cannot work in %s: %s\n", base.c_str(), e.what());
    _exit(1);
  }
  if (!write_frame(sock_, kReady)) exit_now();
  std::string in;
  while (read_frame(sock_, in)) {
    json reply;
    try {
      reply = handle(wire::unpack(in));
    } catch (const std::exception& e) {
      reply = {{"error", e.what()}};
    }
    if (!write_frame(sock_, wire::pack(std::move(reply)))) break;
  }
  exit_now();
}

Task& Zygote::task_for(const json& problem, int calls, int threads) {
  auto t = make_task(problem);
  std::string key = t->key();
  auto it = tasks_.find(key);
  if (it == tasks_.end()) {
    if (task_order_.size() >= 4) {  // a few problems' inputs at most
      tasks_.erase(task_order_.front());
      task_order_.pop_front();
    }
    task_order_.push_back(key);
    it = tasks_.emplace(key, std::move(t)).first;
  }
  it->second->prepare(calls, threads);
  return *it->second;
}

json Zygote::handle(const json& req) {
  // Again before each request: a compiler orphaned by a crashed process may have
  // written into its tree after the sweep at start-up.
  files::sweep_orphans(files::temp_base(), "engine-zygote");
  const std::string op = req.at("op");
  if (op == "cuda_probe" || op == "cuda_compile" || op == "cuda_run" || op == "cuda_sandbox") {
    // a run's inputs are drawn here call by call, on the threads the engine gives
    if (op == "cuda_run") set_between_call_workers(req.value("parallel", 1));
    return cuda_in_child(req);
  }
  if (op == "cuda_batch") {
    set_between_call_workers(req.value("parallel", 1));
    return cuda_batch_in_child(req);
  }
  if (op == "cuda_release") {
    end_warm_cuda_child();
    return json::object();
  }
  const ResolvedOptions opts = ResolvedOptions::from_json(req.at("options"));  // the one decoding
  task_ = &task_for(opts.problem, opts.warmup + opts.max_runs + kSpareCalls, opts.threads);
  set_between_call_workers(opts.split_checks ? opts.threads : 1);  // the calls' cores are idle between calls
  std::vector<Job> jobs;
  bool reference = op == "reference";
  if (reference) {
    jobs.resize(1);
  } else if (op == "evaluate") {
    const auto& sources = req.at("sources");
    jobs.resize(sources.size());
    for (size_t i = 0; i < jobs.size(); ++i) jobs[i].source = sources[i].get<std::string>();
  } else {
    throw std::runtime_error("unknown request '" + op + "'");
  }
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].index = i;
  peak_gflops_ = req.value("peak_gflops", 0.0);
  peak_gbps_ = req.value("peak_gbps", 0.0);
  run_batch(jobs, opts, reference, std::max(1, req.value("parallel", 1)));
  json results = json::array();
  for (auto& j : jobs) results.push_back(std::move(j.result));
  return {{"results", results}};
}

void Zygote::spawn(Job& job, const ResolvedOptions& opts, bool reference, std::vector<Job>& all) {
  int up[2], down[2];
  if (pipe2(up, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(down, O_CLOEXEC) != 0) {
    close(up[0]);
    close(up[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  auto close_pipes = [&] {
    for (int fd : {up[0], up[1], down[0], down[1]}) close(fd);
  };
  std::string dir = root_.path() + "/kernel-XXXXXX";
  if (!mkdtemp(dir.data())) {
    close_pipes();
    throw std::runtime_error("cannot create a directory in " + root_.path());
  }
  job.workdir = dir;
  job.stage = std::make_unique<Stage>(task_->make_stage());
  task_->load_call(*job.stage, 0);

  ChildSpec spec;
  spec.reference = job.reference = reference;
  spec.yardstick = opts.yardstick;
  spec.source = job.source;
  spec.backend = opts.backend;
  spec.copts.opt = opts.opt;
  spec.copts.march = opts.march_flags;
  spec.copts.entry = task_->entry();
  spec.copts.workdir = dir;
  spec.threads = opts.threads;
  spec.timeout = opts.timeout;
  spec.memory_mb = opts.memory_mb;
  spec.task = task_;
  spec.stage = job.stage.get();

  const pid_t zygote = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close_pipes();
    files::remove_tree(dir);
    job.workdir.clear();
    throw std::runtime_error(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != zygote) _exit(1);
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    // Nothing the kernel may see beyond its own stage: the prepared inputs of calls to
    // come and the references are unmapped, other kernels' stages too.
    for (auto& [key, task] : tasks_) task->forget_secrets();
    for (auto& other : all)
      if (&other != &job && other.stage) {
        for (auto& b : other.stage->inputs) b.unmap();
        for (auto& b : other.stage->outputs) b.unmap();
      }
    int a = fcntl(up[1], F_DUPFD_CLOEXEC, 10), b = fcntl(down[0], F_DUPFD_CLOEXEC, 10);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
    dup3(a, kToZygoteFd, O_CLOEXEC);
    dup3(b, kFromZygoteFd, O_CLOEXEC);
    close_range(kFromZygoteFd + 1, ~0U, 0);
    if (chdir(dir.c_str()) != 0) _exit(1);
    child_main(spec);
  }
  setpgid(pid, pid);
  close(up[1]);
  close(down[0]);
  // Drawn only now, so the kernel's process (a copy of this one at the fork) never holds
  // the secret that picks the points "paper" mode checks.
  if (getrandom(&job.secret, sizeof job.secret, 0) != sizeof job.secret) job.secret ^= uint64_t(monotonic_seconds() * 1e9);
  job.has_cpu_clock = clock_getcpuclockid(pid, &job.cpu_clock) == 0;
  job.pid = pid;
  job.from = up[0];
  job.to = down[1];
  job.state = Job::compiling;
  job.compile_start = monotonic_seconds();
  job.deadline = job.compile_start + opts.compile_timeout;
  live_.push_back(&job);
}

void Zygote::reap() {
  for (;;) {
    int st = 0;
    rusage ru{};
    pid_t p = wait4(-1, &st, WNOHANG, &ru);
    if (p <= 0) return;
    dying_.erase(std::remove(dying_.begin(), dying_.end(), p), dying_.end());
    for (Job* j : live_)
      if (j->pid == p) {
        j->exited = true;
        j->wstatus = st;
        j->ru = ru;
      }
  }
}

void Zygote::wait_for(Job& job) {
  kill(-job.pid, SIGKILL);  // the whole group: the child, its threads, a compiler
  if (!job.exited) {
    int st = 0;
    rusage ru{};
    while (wait4(job.pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    job.exited = true;
    job.wstatus = st;
    job.ru = ru;
  }
  // What else was in the group (a compiler and its passes) was killed with it and, as
  // each parent died, handed to us (subreaper): reap it all now, leaving no zombie.
  int st = 0;
  while (waitpid(-job.pid, &st, 0) > 0 || errno == EINTR) {
  }
}

void Zygote::finish(Job& job, const ResolvedOptions& opts) {
  job.result = verdict(job, opts, {*task_, peak_gflops_, peak_gbps_, stack_lo_, stack_hi_});
  if (job.from >= 0) close(job.from);
  if (job.to >= 0) close(job.to);
  job.from = job.to = -1;
  if (!job.workdir.empty()) files::remove_tree(job.workdir);
  job.stage.reset();
  job.counters.reset();
  job.state = Job::finished;
  live_.erase(std::remove(live_.begin(), live_.end(), &job), live_.end());
}

// Before a pool runs (its kernels are all `ready` then, and only its own are): a kernel
// whose compiled code an earlier kernel of the batch has (of this pool, or of one that
// ran before it) is ended unrun and will take that kernel's measurement. In index order:
// of copies ready for the same pool the first runs; a pool holds the kernels whose compiles
// ended first, so a copy compiled sooner may run in place of an earlier index. Returns how
// many it ended.
size_t Zygote::share_identical_code(std::vector<Job>& jobs, std::map<std::string, size_t>& first_with,
                                    const ResolvedOptions& opts) {
  size_t ended = 0;
  for (auto& j : jobs) {
    if (j.state != Job::ready) continue;
    const std::string id = j.compiled->value("code_id", "");
    if (id.empty()) continue;
    auto [it, first] = first_with.emplace(id, j.index);
    if (first || it->second == j.index) continue;
    j.same_code_as = it->second;
    wait_for(j);
    finish(j, opts);
    ++ended;
  }
  return ended;
}

void Zygote::run_batch(std::vector<Job>& jobs, const ResolvedOptions& opts, bool reference, int parallel) {
  // Compiled, waiting to run. With `hold` (the default) the compiles still under way when
  // the pool is full are held stopped while it runs and go on afterwards; without it a pool
  // waits for its slowest compiles while other cores idle (66-70% of 16 cores busy). A pool
  // of 128 instead of 32 kept the cores busier (85%) but made the run phases no shorter and
  // a step no faster (step_eval_bench, docs/performance.md).
  const size_t cap = static_cast<size_t>(std::max(1, opts.pool));
  const double timeout = opts.timeout;
  size_t next = 0, finished = 0, turn = 0;
  bool draining = false;  // running the compiled pool
  std::map<std::string, size_t> first_with;  // code identity -> the batch's first kernel with it
  end_stopped();  // an earlier batch that ended in an error may have left some
  while (finished < jobs.size()) {
    size_t compiling = 0, ready = 0, pooled = 0;
    Job* running = nullptr;
    for (auto& j : jobs) {
      compiling += j.state == Job::compiling;
      ready += j.state == Job::ready || j.state == Job::paused;
      pooled += j.in_pool && (j.state == Job::ready || j.state == Job::paused);
      if (j.state == Job::running) running = &j;
    }
    // Phases: compile (up to `parallel` at once) until the batch is exhausted or the pool
    // of compiled kernels full (with `hold`: the compiles under way held stopped), then
    // run the whole pool with nothing else of ours on the CPU, then compile again.
    // (Refilling the pool after every run would compile one kernel at a time between
    // runs.) The pool's kernels take turns, one call each, so that a slow minute of the
    // machine falls on all of them alike and kernels of a group are ranked under the same
    // conditions.
    auto start_compiles = [&] {
      while (next < jobs.size() && compiling < static_cast<size_t>(parallel) &&
             (opts.hold ? ready : compiling + ready) < cap) {
        try {
          spawn(jobs[next], opts, reference, jobs);
          ++compiling;
        } catch (const std::exception& e) {
          jobs[next].result = {{"status", "runtime_error"}, {"message", std::string("cannot start: ") + e.what()},
                               {"gflops", 0.0}, {"times", json::array()}, {"options", opts.as_recorded()}};
          jobs[next].state = Job::finished;
          ++finished;
        }
        ++next;
      }
    };
    if (!running) {
      if (!draining) {
        start_compiles();
        if (ready > 0 && ((opts.hold && ready >= cap) || compiling == 0)) {
          if (opts.hold) hold_compiles(jobs);
          if (opts.share) {
            size_t ended = share_identical_code(jobs, first_with, opts);
            ready -= ended;
            finished += ended;
          }
          pooled = 0;
          for (auto& j : jobs)
            if (j.state == Job::ready) j.in_pool = true, ++pooled;
          draining = pooled > 0;
          if (draining) end_stopped();  // no process's end beside a timed call
        }
      }
      if (draining && pooled == 0) {
        draining = false;
        kill_stopped();  // they end while the next compiles run, and are gone before the next pool
        for (auto& j : jobs)
          if (j.held_at > 0) release(j);
        start_compiles();
      }
      if (draining) {
        for (size_t k = 0; k < jobs.size(); ++k) {
          Job& j = jobs[(turn + k) % jobs.size()];
          if (j.in_pool && (j.state == Job::ready || j.state == Job::paused)) {
            take_turn(j, timeout);
            running = &j;
            turn = j.index + 1;
            break;
          }
        }
      }
    }

    std::vector<pollfd> fds;
    std::vector<Job*> owners;
    double nearest = 1e300;
    for (auto& j : jobs) {
      if (j.state == Job::pending || j.state == Job::finished) continue;
      if (!j.eof) {
        fds.push_back({j.from, POLLIN, 0});
        owners.push_back(&j);
      }
      if ((j.state == Job::compiling && j.held_at == 0) || j.state == Job::running)
        nearest = std::min(nearest, j.deadline);
    }
    double wait_s = nearest - monotonic_seconds();
    int wait_ms = nearest >= 1e300 ? 1000 : std::max(0, static_cast<int>(std::ceil(wait_s * 1000)));
    if (!fds.empty()) {
      int n = poll(fds.data(), fds.size(), std::min(wait_ms, 1000));
      if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      for (size_t i = 0; n > 0 && i < fds.size(); ++i)
        if (fds[i].revents) read_from(*owners[i], opts);
    }
    reap();
    const double now = monotonic_seconds();
    for (auto& j : jobs) {
      if (j.state == Job::pending || j.state == Job::finished) continue;
      bool late = ((j.state == Job::compiling && j.held_at == 0) || j.state == Job::running) &&
                  now >= j.deadline && !j.eof && !j.exited;
      if (late) {
        j.timeout_msg = j.state == Job::compiling
                            ? "compiling took longer than " + fmt("%g", opts.compile_timeout) + " s (killed)"
                            : "the kernel ran longer than the " + fmt("%g", timeout) +
                                  " s limit (warm-up and timed runs; killed)";
        j.eof = true;
      }
      if (j.done && !j.exited) {
        // Every call made and checked, the process stopped: its end (a process's memory
        // given back, on one core) waits until no kernel of the pool runs.
        j.run_end = monotonic_seconds();
        stopped_.push_back(j.pid);
        finish(j, opts);
        ++finished;
      } else if (j.eof || j.exited) {
        wait_for(j);  // kills what is left of the group and reaps the child
        if (j.run_start > 0) j.run_end = monotonic_seconds();
        // The process is gone: what it wrote before dying ends at EOF.
        while (!j.eof) read_from(j, opts);
        finish(j, opts);
        ++finished;
      }
    }
  }
  end_stopped();
  for (auto& j : jobs)
    if (j.same_code_as) j.result = shared_verdict(jobs[*j.same_code_as].result, j.result, *j.same_code_as);
}

// The compiles under way when a pool starts to run (option hold): each stopped with its
// whole group (a compiler it started included).
void Zygote::hold_compiles(std::vector<Job>& jobs) {
  std::vector<Job*> held;
  for (auto& j : jobs) {
    if (j.state != Job::compiling || j.held_at > 0 || j.eof || j.exited) continue;
    kill(-j.pid, SIGSTOP);
    j.held_at = monotonic_seconds();
    held.push_back(&j);
  }
  // A stop is taken when the process next runs, so wait until each is held, briefly: not by
  // wait4, since a process whose vfork child was stopped before its exec waits
  // uninterruptibly for the child and is never reported stopped (tests/bench/hold_test.cpp).
  // Such a process may run for microseconds more, to take its own stop once the child has.
  const double until = monotonic_seconds() + 0.05;
  for (Job* j : held)
    while (!all_threads_held(j->pid) && monotonic_seconds() < until) usleep(200);
}

// A held compile goes on; the time it was held is not its own (its deadline moves on).
void Zygote::release(Job& job) {
  const double now = monotonic_seconds();
  job.holds.emplace_back(job.held_at, now);
  job.deadline += now - job.held_at;
  job.held_at = 0;
  kill(-job.pid, SIGCONT);
}

// The processes of kernels that made every call, left stopped while the pool ran: killed
// together, each with what else is left of its group. Their ends (a process's memory given
// back) may overlap compiles, never a timed call: end_stopped reaps them first.
void Zygote::kill_stopped() {
  for (pid_t pid : stopped_) kill(-pid, SIGKILL);
  dying_.insert(dying_.end(), stopped_.begin(), stopped_.end());
  stopped_.clear();
}

// Killed and reaped, each with its group: none of them is left running. (reap() may have
// reaped some already; they have left dying_, so no pid waited for here is another's.)
void Zygote::end_stopped() {
  kill_stopped();
  for (pid_t pid : dying_) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    while (waitpid(-pid, &st, 0) > 0 || errno == EINTR) {
    }
  }
  dying_.clear();
}

}  // namespace bench::detail

namespace bench {

[[noreturn]] void serve(int fd, pid_t engine) {
  detail::Zygote z(fd, engine);
  z.run();
}

}  // namespace bench
