// engine [options] [script [args...]]: runs Lua scripts with the engine's modules, or
// opens the REPL.
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench.hpp"
#include "parallel/bench_workers/cluster.hpp"
#include "files/files.hpp"
#include "kernelc/backend.hpp"
#include "host/blas_kernels.hpp"
#include "host/repl.hpp"
#include "host/runtime.hpp"
#include "parallel/rendezvous/rendezvous.hpp"
#include "parallel/trainer_ranks/replica.hpp"

namespace {

void print_help(const host::Paths& paths) {
  std::printf(
      "usage: engine [options] [script [args...]]\n"
      "\n"
      "Runs a Lua 5.4 script with the engine's modules loaded, or opens the REPL when no\n"
      "script is given.\n"
      "\n"
      "options:\n"
      "  -e CODE     run CODE (may be repeated)\n"
      "  -l MODULE   require MODULE into a global named after its last part\n"
      "  -l G=MODULE require MODULE into the global G\n"
      "  -i          enter the REPL after running the script or -e code\n"
      "  -v          print the version\n"
      "  -h, --help  print this help\n"
      "  --ranks=N   run N ranks on this node: this one runs the script, the others load\n"
      "              the same policies and share its sampling and training (one per\n"
      "              GPU on CUDA); launchers set ENGINE_RANK, ENGINE_WORLD_SIZE and\n"
      "              ENGINE_RENDEZVOUS instead (README: several GPUs)\n"
      "  --          stop reading options\n"
      "  -           run the standard input as a script\n"
      "\n"
      "A script given by bare name (engine experiment1.lua) is looked up in the working\n"
      "directory, then in:\n");
  for (const auto& d : paths.script_dirs) std::printf("  %s\n", d.c_str());
  std::printf("require() finds the engine's Lua library in:\n");
  for (const auto& d : paths.lua_dirs) std::printf("  %s\n", d.c_str());
  std::printf(
      "Models are looked up in:\n"
      "  %s\n"
      "Set ENGINE_HOME to use another tree holding stdlib/, scripts/ and models/.\n"
      "The REPL keeps its history in ~/.engine_history (ENGINE_HISTORY overrides).\n",
      paths.models.c_str());
}

// -l NAME=MODULE sets the global NAME; -l a.b.c sets the global c.
std::string global_name(std::string& module) {
  if (auto eq = module.find('='); eq != std::string::npos) {
    std::string name = module.substr(0, eq);
    module = module.substr(eq + 1);
    return name;
  }
  auto dot = module.rfind('.');
  return dot == std::string::npos ? module : module.substr(dot + 1);
}

struct Command {
  std::vector<std::pair<char, std::string>> actions;  // 'e' code or 'l' module, in order
  bool interactive = false, version = false, help = false;
  std::string script;  // "" none, "-" stdin
  std::vector<std::string> args;
};

bool parse(int argc, char** argv, Command& cmd) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-" || a.empty() || a[0] != '-') break;
    if (a == "-i") cmd.interactive = true;
    else if (a == "-v" || a == "--version") cmd.version = true;
    else if (a == "-h" || a == "--help") cmd.help = true;
    else if (a.rfind("--ranks=", 0) == 0) continue;  // read by ranks_option
    else if (a == "--ranks") ++i;
    else if (a == "-e" || a == "-l") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "engine: '%s' needs an argument\n", a.c_str());
        return false;
      }
      cmd.actions.emplace_back(a[1], argv[++i]);
    } else if ((a.rfind("-e", 0) == 0 || a.rfind("-l", 0) == 0) && a.size() > 2) {
      cmd.actions.emplace_back(a[1], a.substr(2));
    } else {
      std::fprintf(stderr, "engine: unknown option '%s' (engine --help lists them)\n", a.c_str());
      return false;
    }
  }
  if (i < argc) {
    cmd.script = argv[i++];
    cmd.args.assign(argv + i, argv + argc);
  }
  return true;
}

int run(int argc, char** argv) {
  Command cmd;
  if (!parse(argc, argv, cmd)) return 2;
  host::Paths paths = host::find_paths();
  if (cmd.help) {
    print_help(paths);
    return 0;
  }
  if (cmd.version) {
    std::printf("engine %s (%s)\n", ENGINE_VERSION, LUA_RELEASE);
    if (cmd.actions.empty() && cmd.script.empty() && !cmd.interactive) return 0;
  }
  host::Runtime rt(paths);
  rt.set_args(argv[0], cmd.script, cmd.args);
  for (auto& [kind, value] : cmd.actions) {
    bool ok = kind == 'e' ? rt.run_string(value, "=(command line)") : rt.require(value, global_name(value));
    if (!ok) return 1;
  }
  if (cmd.script == "-") {
    std::string code(std::istreambuf_iterator<char>(std::cin), {});
    if (!rt.run_string(code, "=stdin")) return 1;
  } else if (!cmd.script.empty()) {
    auto found = host::find_script(paths, cmd.script);
    if (!found) {
      std::fprintf(stderr, "engine: cannot find script '%s' (engine --help says where it looks)\n",
                   cmd.script.c_str());
      return 1;
    }
    if (!rt.run_file(found->string(), cmd.args)) return 1;
  }
  bool nothing_ran = cmd.script.empty() && cmd.actions.empty() && !cmd.version;
  if (cmd.interactive || (nothing_ran && isatty(STDIN_FILENO))) {
    host::run_repl(rt);
  } else if (nothing_ran) {  // as lua does: a script on the standard input
    std::string code(std::istreambuf_iterator<char>(std::cin), {});
    if (!rt.run_string(code, "=stdin")) return 1;
  }
  return 0;
}

// libtorch on the CPU allocates and frees activations of tens of MB per layer; glibc
// A shell's OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY made libgomp (loaded with
// libtorch, before main) bind this thread to one place, and everything the engine starts
// (the evaluation process, the kernels' processes) would inherit that one core: a kernel
// on 16 threads read 16 GFLOPS instead of 160. The kernels' OpenMP settings are the
// harness's (engine/kernel_child/child.cpp): drop the variables and take back the CPUs the
// process that launched the engine has. Under MPI the launcher's binding stays.
void undo_openmp_binding() {
  bool bound = false;
  for (const char* v : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (std::getenv(v)) {
      bound = true;
      unsetenv(v);
    }
  if (!bound || std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE")) return;
  cpu_set_t parent;
  if (sched_getaffinity(getppid(), sizeof parent, &parent) == 0) sched_setaffinity(0, sizeof parent, &parent);
}

// serves those with fresh mmaps, so every forward pass page-faults its whole working
// set in again (measured: a third of a small model's training step). Keep big blocks in
// the heap and the heap's top mapped. After the zygote forks: kernels run as they would.
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// --ranks=N (or --ranks N) among the options before the script: 0 when absent.
int ranks_option(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--" || a == "-" || a.empty() || a[0] != '-') break;
    if (a == "-e" || a == "-l") {
      ++i;
      continue;
    }
    std::string value;
    if (a.rfind("--ranks=", 0) == 0) value = a.substr(8);
    else if (a == "--ranks") value = i + 1 < argc ? argv[i + 1] : "";
    else continue;
    char* end = nullptr;
    long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 1024)
      throw std::invalid_argument("--ranks takes a number of ranks (1 to 1024), got '" + value + "'");
    return static_cast<int>(n);
  }
  return 0;
}

// engine --ranks=N: this process becomes rank 0 of N and starts the others, the same
// command, as its children; they die with it. The destructor stops and waits for them.
//
// A follower that ends while rank 0 still needs it is named at once: gloo's collectives
// then fail by themselves, but NCCL's wait for their timeout (minutes), so rank 0 ends
// after a short grace either way. The run store keeps every committed step (--resume).
class LocalRanks {
 public:
  LocalRanks(int n, char** argv) {
    char dir[] = "/tmp/engine-ranks-XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("--ranks: cannot make a directory in /tmp");
    dir_ = dir;
    const std::string store = rendezvous::file_store(dir_);
    const pid_t leader = getpid();
    // The program itself, by its own name (a follower's process name is then "engine").
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) throw std::runtime_error("--ranks: cannot find this program (/proc/self/exe)");
    self[len] = '\0';
    for (int r = 1; r < n; ++r) {
      pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("--ranks: cannot start rank " + std::to_string(r));
      if (pid == 0) {
        rendezvous::publish({r, n, r, n, store});
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != leader) _exit(1);
        execv(self, argv);
        std::perror("engine: --ranks: exec");
        _exit(127);
      }
      children_.push_back(pid);
    }
    for (size_t i = 0; i < children_.size(); ++i)
      watchers_.emplace_back([this, i] { watch(static_cast<int>(i) + 1, children_[i]); });
    rendezvous::publish({0, n, 0, n, store});
  }
  ~LocalRanks() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    ended_.notify_all();
    replica::stop();
    for (size_t i = 0; i < children_.size(); ++i) {
      int status = 0;
      if (waitpid(children_[i], &status, 0) != children_[i]) continue;
      // A follower that failed while rank 0 was already on its way out (gloo noticed the
      // closed socket before the watcher saw the process end) is named here.
      std::lock_guard<std::mutex> lock(mu_);
      if (reported_.count(children_[i])) continue;
      if (WIFSIGNALED(status)) report(static_cast<int>(i) + 1, children_[i], true, WTERMSIG(status));
      else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        report(static_cast<int>(i) + 1, children_[i], false, WEXITSTATUS(status));
    }
    for (auto& w : watchers_) w.join();
    files::remove_tree(dir_);
  }

 private:
  static constexpr auto kGrace = std::chrono::seconds(10);

  void watch(int rank, pid_t pid) {
    siginfo_t info{};
    int got;
    do got = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
    while (got != 0 && errno == EINTR);
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_ || got != 0) return;
    report(rank, pid, info.si_code != CLD_EXITED, info.si_status);
    if (!ended_.wait_for(lock, kGrace, [this] { return stopping_; })) _exit(1);
  }

  void report(int rank, pid_t pid, bool killed, int code) {
    reported_.insert(pid);
    const std::string how = killed ? "was killed by signal " + std::to_string(code) + " (" + strsignal(code) + ")"
                                   : "exited with status " + std::to_string(code);
    std::fprintf(stderr,
                 "engine: rank %d (pid %d) %s while rank 0 still needed it; rank 0 stops "
                 "(a run continues from its last committed step with --resume)\n",
                 rank, static_cast<int>(pid), how.c_str());
    std::fflush(stderr);
  }

  std::string dir_;
  std::vector<pid_t> children_;
  std::vector<std::thread> watchers_;
  std::mutex mu_;
  std::set<pid_t> reported_;
  std::condition_variable ended_;
  bool stopping_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    // The in-memory back end is the default; the evaluation process starts now so that
    // its start-up (a sweep of what crashed ones left behind) overlaps the script's.
    host::choose_openblas_kernels(argv);
    undo_openmp_binding();
    bench::register_backend(std::make_unique<kernelc::GccJitBackend>());
    keep_freed_memory();
    std::unique_ptr<LocalRanks> local_ranks;
    if (int n = ranks_option(argc, argv); n > 1 && !std::getenv("ENGINE_RANK")) {
      if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"))
        throw std::runtime_error("--ranks starts ranks itself; under mpirun, set ENGINE_TRAINERS instead");
      local_ranks = std::make_unique<LocalRanks>(n, argv);
    }
    // Under mpirun, a benchmark worker rank serves here and never returns.
    cluster::start(argc, argv);
    // A follower trainer rank serves rank 0 here and never runs the script.
    if (auto status = replica::start()) return *status;
    try {
      bench::start_zygote();
    } catch (const std::exception&) {
      // Scripts that evaluate nothing still run; the first evaluation reports why.
    }
    int status = run(argc, argv);
    replica::stop();
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine: %s\n", e.what());
    replica::stop();
    return 1;
  }
}
