// A kernel's child process, forked by the evaluation process: compile, inspect, wait for
// the zygote's go, tighten, run, report. Its boundary is the pair of pipes of
// wire/records.hpp; the time it reports of a call is a claim, which the zygote bounds by
// its own clock (engine/evaluator/calls.cpp).
#include "kernel_child/child.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <grp.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <locale.h>
#include <malloc.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "files/clock.hpp"
#include "task/between_calls.hpp"

namespace bench::detail {

namespace {

constexpr uid_t kNobody = 65534;
// Far deeper than the evaluation process's frames reach where it checks outputs and forks.
constexpr size_t kStackCleared = 256 << 10;

bool write_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

void send_record(RecordType type, const void* data, size_t len) {
  RecordHeader h{type, static_cast<uint32_t>(len)};
  std::string buf(reinterpret_cast<const char*>(&h), sizeof h);
  buf.append(static_cast<const char*>(data), len);
  if (!write_all(kToZygoteFd, buf.data(), buf.size())) _exit(70);
}

void send_json(RecordType type, const nlohmann::json& j) {
  auto bytes = nlohmann::json::to_cbor(j);
  std::string s(bytes.begin(), bytes.end());
  send_record(type, s.data(), s.size());
}

// ---- faults -----------------------------------------------------------------
// One record, one write (atomic on a pipe), then the whole process ends. The handler
// cannot be replaced by the kernel: rt_sigaction is outside the seccomp allow-list.
pid_t g_main_tid = 0;
// Per thread: two threads may fault at once. The engine's own TLS is static, so reading
// it in a handler is safe.
thread_local volatile sig_atomic_t g_reading_argument = 0;
struct FaultMessage {
  RecordHeader h;
  FaultRecord f;
};
thread_local FaultMessage g_fault;
thread_local bool g_writing = false;

// The path argument of the file system calls a library reaches for, or null.
const char* path_argument(int nr, const ucontext_t* uc) {
  const greg_t* r = uc->uc_mcontext.gregs;
  switch (nr) {
    case SYS_open: case SYS_stat: case SYS_lstat: case SYS_access: case SYS_readlink:
    case SYS_execve: case SYS_unlink: case SYS_mkdir: case SYS_creat: case SYS_chdir:
      return reinterpret_cast<const char*>(r[REG_RDI]);
    case SYS_openat: case SYS_newfstatat: case SYS_statx: case SYS_faccessat: case SYS_faccessat2:
    case SYS_readlinkat: case SYS_execveat: case SYS_unlinkat: case SYS_mkdirat: case SYS_openat2:
      return reinterpret_cast<const char*>(r[REG_RSI]);
    default:
      return nullptr;
  }
}

// Appends a string (len < 0) or len bytes the kernel handed a system call to out,
// printable only; returns whether a line ended. A bad pointer faults here: the handler
// runs again and sends the record without the text.
bool copy_argument(char* out, size_t size, const char* p, long len) {
  g_reading_argument = 1;
  size_t at = strnlen(out, size);
  bool line = false;
  for (long i = 0; at + 1 < size && (len < 0 ? p[i] != 0 : i < len); ++i) {
    if (p[i] == '\n') {
      if (at == 0) continue;  // a message may start on a fresh line ("\nlibgomp: ")
      line = true;
      break;
    }
    out[at++] = p[i] >= 32 && p[i] < 127 ? p[i] : '?';
  }
  out[at] = 0;
  g_reading_argument = 0;
  return line || at + 1 >= size;
}

void on_fault(int sig, siginfo_t* si, void* context) {
  FaultMessage& rec = g_fault;
  if (g_reading_argument) {
    rec.f.text[0] = 0;
  } else {
    rec.h = {kFault, sizeof(FaultRecord)};
    rec.f.sig = sig;
    rec.f.code = si->si_code;
    rec.f.addr = reinterpret_cast<uint64_t>(si->si_addr);
    rec.f.syscall_nr = sig == SIGSYS ? si->si_syscall : -1;
    rec.f.main_thread = static_cast<pid_t>(syscall(SYS_gettid)) == g_main_tid;
    const bool writing = g_writing;  // a message to stdout/stderr under way
    g_writing = false;
    if (!writing) rec.f.text[0] = 0;
    rec.f.fd = -1;
    if (sig == SIGSYS && context) {
      auto* uc = static_cast<ucontext_t*>(context);
      greg_t* r = uc->uc_mcontext.gregs;
      if (si->si_syscall == SYS_write) {
        rec.f.fd = static_cast<int32_t>(r[REG_RDI]);
        // A library's message comes in pieces ("libgomp: ", the text, "\n"): the pieces
        // are taken as written until the line ends, and the line is the verdict's.
        if (!copy_argument(rec.f.text, sizeof rec.f.text, reinterpret_cast<const char*>(r[REG_RSI]),
                           static_cast<long>(r[REG_RDX])) &&
            (rec.f.fd == 1 || rec.f.fd == 2)) {
          r[REG_RAX] = r[REG_RDX];
          g_writing = true;
          return;
        }
      } else {
        if (writing) rec.f.text[0] = 0;
        if (const char* p = path_argument(si->si_syscall, uc)) copy_argument(rec.f.text, sizeof rec.f.text, p, -1);
      }
    }
  }
  ssize_t ignored = write(kToZygoteFd, &rec, sizeof rec);
  (void)ignored;
  syscall(SYS_exit_group, 128 + sig);
}

void install_fault_handlers() {
  g_main_tid = static_cast<pid_t>(syscall(SYS_gettid));
  static char altstack[1 << 16];  // a stack overflow still gets its record written
  stack_t ss{};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT, SIGTRAP}) sigaction(s, &sa, nullptr);
}

// ---- tightening -------------------------------------------------------------

long vm_size_bytes() {
  std::ifstream f("/proc/self/statm");
  long pages = 0;
  f >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

// RLIMIT_NPROC counts every thread of the user: allow what exists plus our threads.
long tasks_of_user(uid_t uid) {
  long n = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 4096;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string dir = std::string("/proc/") + e->d_name;
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || st.st_uid != uid) continue;
    if (DIR* t = opendir((dir + "/task").c_str())) {
      while (dirent* x = readdir(t)) n += x->d_name[0] != '.';
      closedir(t);
    }
  }
  closedir(proc);
  return n;
}

void set_limit(int res, rlim_t soft, rlim_t hard) {
  rlimit rl{soft, hard};
  setrlimit(res, &rl);
}

void set_soft_limit(int res, rlim_t soft) {
  rlimit rl{};
  getrlimit(res, &rl);
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? soft : std::min(soft, rl.rlim_max);
  setrlimit(res, &rl);
}

// What compiled kernels and OpenMP threads need; everything else traps (SIGSYS) and
// ends the child with the call's name. Threads may be created, processes may not.
void load_seccomp() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
  if (!ctx) _exit(71);
  // A system call through another ABI (int $0x80, x32) ends the whole process at once.
  seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  auto allow = [&](int nr) { seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0); };
  seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, kToZygoteFd));
  seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1, SCMP_A0(SCMP_CMP_EQ, kFromZygoteFd));
  // Threads only: a clone without CLONE_THREAD would be a new process.
  seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                   SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  // glibc installs its own real-time signal handlers (cancellation, setxid) with the
  // first thread; the fault handlers (signals below 32) stay ours.
  seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_GE, 32));
  // clone3 passes its flags in memory a filter cannot read: make glibc fall back to clone.
  seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  for (int nr : {SCMP_SYS(futex), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect),
                 SCMP_SYS(madvise), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(set_robust_list),
                 SCMP_SYS(rseq), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigprocmask),
                 SCMP_SYS(rt_sigreturn), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_setaffinity),
                 SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(clock_gettime),
                 SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(clock_nanosleep),
                 SCMP_SYS(nanosleep), SCMP_SYS(getrandom), SCMP_SYS(sigaltstack)})
    allow(nr);
  if (seccomp_load(ctx) != 0) _exit(72);
  seccomp_release(ctx);
}

void tighten(const ChildSpec& spec, bool filter) {
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, 0, 0);  // any write to a file raises SIGXFSZ
  set_limit(RLIMIT_NOFILE, 16, 16);
  const rlim_t as = static_cast<rlim_t>(vm_size_bytes()) + static_cast<rlim_t>(spec.memory_mb) * 1024 * 1024;
  set_limit(RLIMIT_AS, as, as);
  // An engine running as root: the kernel runs as nobody, without privileges, so that
  // RLIMIT_NPROC holds (the kernel exempts root) and a thread bomb meets it.
  const pid_t zygote = getppid();
  if (getuid() == 0 && setgroups(0, nullptr) == 0 && setgid(kNobody) == 0 && setuid(kNobody) == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);  // cleared by the change of credentials
    if (getppid() != zygote) _exit(0);
  }
  // Threads, not processes (seccomp refuses those): what the user already runs, this
  // kernel's threads, and what other engines' kernels may start as the same user
  // meanwhile: one running kernel per engine, at most one thread per core between them
  // (benchmark workers sharing a node), and a margin. (Counted while kernels waited in
  // the pools as this user, 4 workers on a 16-core node made honest OpenMP kernels'
  // thread creation fail.)
  if (getuid() != 0) {
    const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const rlim_t n = static_cast<rlim_t>(tasks_of_user(getuid()) + spec.threads + cpus + 64);
    set_limit(RLIMIT_NPROC, n, n);
  }
  // CPU time across all threads: a backstop behind the zygote's wall-clock timeout.
  // RLIMIT_CPU counts from the process's start: add what compiling in-process used.
  rusage used{};
  getrusage(RUSAGE_SELF, &used);
  const double spent = static_cast<double>(used.ru_utime.tv_sec + used.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(used.ru_utime.tv_usec + used.ru_stime.tv_usec);
  const rlim_t cpu = static_cast<rlim_t>(std::ceil(spent + spec.timeout * spec.threads)) + 2;
  set_limit(RLIMIT_CPU, cpu, cpu + 1);
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (filter) load_seccomp();
}

// Threads for the OpenMP runtime whether it is loaded now (from the kernel) or was
// already in the engine before the fork.
void set_omp_threads(int threads) {
  if (void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    if (auto f = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_num_threads"))) f(threads);
    if (auto f = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_dynamic"))) f(0);
    dlclose(gomp);
  }
}

// Every thread of this process to a core of its own, in the order they were made (the
// main thread first): a library's own pool (OpenBLAS runs pthreads, which OMP_PROC_BIND
// does not reach) left to the scheduler after each stop piles up on a few cores (measured
// on 16 cores: a median call 0.70 of a plain loop's unpinned, 0.88 pinned).
void pin_threads(const cpu_set_t& cores) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &cores)) cpus.push_back(c);
  std::vector<pid_t> tids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    closedir(d);
  }
  std::sort(tids.begin(), tids.end());
  for (size_t i = 0; i < tids.size() && !cpus.empty(); ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[i % cpus.size()], &one);
    sched_setaffinity(tids[i], sizeof one, &one);
  }
}

}  // namespace

// One thread per core, pinned, for kernels: the zygote stops and continues the process
// between calls, and continued threads the scheduler is free to place pile up on a few
// cores for milliseconds (measured: 16 threads, calls of 0.3 ms taking 2-7 ms).
std::vector<std::string> openmp_environment(int threads, bool reference) {
  std::vector<std::string> env = {"OMP_NUM_THREADS=" + std::to_string(threads), "OMP_DYNAMIC=false"};
  if (!reference) {
    env.push_back("OMP_PROC_BIND=close");
    env.push_back("OMP_PLACES=cores");
  }
  return env;
}

namespace {

// The user's OpenMP settings reach no kernel: a shell's OMP_PLACES or OMP_NUM_THREADS
// changed what a kernel measured (k06 on 2 cores: 44 GFLOPS to 24-29).
void set_openmp_environment(int threads, bool reference) {
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("OMP_", 0) == 0 || kv.rfind("GOMP_", 0) == 0 || kv.rfind("KMP_", 0) == 0)
      names.push_back(kv.substr(0, kv.find('=')));
  }
  for (const auto& n : names) unsetenv(n.c_str());
  for (const auto& kv : openmp_environment(threads, reference)) {
    auto eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
}

}  // namespace

[[noreturn]] void child_main(const ChildSpec& spec) {
  bench::clear_stack_below(kStackCleared);
  // libgomp reads these when it is loaded with the kernel.
  set_openmp_environment(spec.threads, spec.reference);
  // The runtime binds the thread that loads it to the first place: load it now, and
  // compile on every core meanwhile, bound again only for the calls.
  cpu_set_t every_core{}, first_place{};
  sched_getaffinity(0, sizeof every_core, &every_core);
  first_place = every_core;
  if (!spec.reference) {
    if (dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE)) {
      sched_getaffinity(0, sizeof first_place, &first_place);
      sched_setaffinity(0, sizeof every_core, &every_core);
    }
  }
  // In-process back ends (libgccjit) write their temporary files here too; the zygote
  // removes this directory whatever happens to the child.
  if (!spec.copts.workdir.empty()) setenv("TMPDIR", spec.copts.workdir.c_str(), 1);

  nlohmann::json compiled;
  CompiledKernel k;
  void* entry = nullptr;
  if (spec.reference) {
    compiled["backend"] = spec.yardstick.empty() ? "yardstick" : spec.yardstick;
    try {
      Yardstick y = spec.task->reference_entry(spec.threads, spec.yardstick);
      entry = y.entry;
      compiled["backend"] = compiled["library"] = y.library;
      compiled["version"] = y.version;
      compiled["status"] = "ok";
    } catch (const std::exception& e) {
      compiled["status"] = "compile_error";
      compiled["diagnostics"] = e.what();
    }
  } else {
    // The compiler is not trusted with the machine either: a preprocessor or template
    // bomb meets these limits (inherited by the compiler's subprocesses), a hang the
    // zygote's compile timeout.
    // Soft limits only, so that tightening can still set the run's own (a lower hard
    // limit cannot be raised again without privilege).
    set_soft_limit(RLIMIT_AS, static_cast<rlim_t>(vm_size_bytes()) + (rlim_t(4) << 30));
    set_soft_limit(RLIMIT_FSIZE, rlim_t(512) << 20);
    set_limit(RLIMIT_CORE, 0, 0);
    Backend* be = find_backend(spec.backend);
    if (!be) {
      compiled["status"] = "compile_error";
      compiled["diagnostics"] = "no back end named '" + spec.backend + "'";
    } else {
      k = be->compile(spec.source, spec.copts);
      // The techniques come from the compile that parsed the kernel (a fallback keeps the
      // first back end's reading), here in the child: untrusted source is never parsed in
      // the engine itself.
      nlohmann::json feats = std::move(k.features);
      double ms = k.compile_ms;
      if (k.status == CompileStatus::unsupported && spec.backend != "gcc") {
        compiled["fallback"] = true;
        compiled["fallback_reason"] = spec.backend + ": " + k.diagnostics;
        k = find_backend("gcc")->compile(spec.source, spec.copts);
        ms += k.compile_ms;
      }
      // Whatever the back end said, the references decide (a back end may not check).
      if (k.status == CompileStatus::ok)
        for (const auto& s : k.external_symbols)
          if (!symbol_allowed(s)) {
            k.status = CompileStatus::library_violation;
            k.diagnostics += "kernel.c: error: " + library_violation_message(s) + "\n";
            k.entry = nullptr;
          }
      if (k.status == CompileStatus::ok && !k.entry) {
        k.status = CompileStatus::compile_error;
        k.diagnostics += "the back end returned no entry point\n";
      }
      compiled["status"] = to_string(k.status);
      compiled["backend"] = k.backend.empty() ? be->name() : k.backend;
      compiled["diagnostics"] = k.diagnostics;
      compiled["compile_ms"] = ms;
      compiled["external_symbols"] = k.external_symbols;
      // A back end that reads no structure (gcc): the front end reads it once, for them.
      if (feats.is_null())
        if (Backend* fe = find_backend("gccjit")) feats = fe->features(spec.source);
      if (!feats.is_null()) compiled["features"] = feats;
      if (!k.remarks.empty()) compiled["remarks"] = k.remarks;
      entry = k.entry;
      // Before any of the kernel's code runs: the zygote runs identical code once a batch.
      if (k.status == CompileStatus::ok) {
        std::string id = code_identity(entry);
        if (!id.empty()) compiled["code_id"] = id;
      }
    }
  }
  const bool ok = compiled["status"] == "ok";
  send_json(kCompiled, compiled);
  if (!ok) _exit(0);

  for (auto& in : spec.stage->inputs) in.protect_read_only();
  // An in-process compiler sets the locale from the environment (libgccjit does, for its
  // diagnostics); libc would then look up the translation of any message it formats for
  // the kernel's process (libgomp's "Thread creation failed: ...") in a catalogue file,
  // an open that seccomp ends. The kernel's process speaks C.
  setlocale(LC_ALL, "C");
  // Handlers a compiler left behind (libgccjit's driver catches SIGINT, SIGTERM, ...):
  // after this, any handler besides ours and glibc's is the kernel's.
  for (int s = 1; s < 32; ++s)
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
  set_omp_threads(spec.threads);
  install_fault_handlers();
  // glibc sizes its malloc arenas from the CPU count, read from /sys the first time a
  // ninth thread allocates (dynamic TLS of a threadprivate variable is enough): fixed
  // now, or an honest kernel's thread dies at that open under seccomp on a big node.
  mallopt(M_ARENA_MAX, std::max(8, spec.threads));
  if (spec.reference) pin_threads(every_core);  // the library's pool exists once it is loaded
  else sched_setaffinity(0, sizeof first_place, &first_place);

  // Calls until the zygote closes the command pipe. Between calls the zygote stops this
  // process, checks the output and writes the next call's inputs.
  const Task& task = *spec.task;
  bool tight = false, repinned = false;
  for (uint32_t call = 0;;) {
    char cmd = 0;
    ssize_t n = read(kFromZygoteFd, &cmd, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) _exit(0);
    // Tightened when its turn comes, not while it waits in the pool: the thread limit
    // counts the user's tasks then, and the kernels waiting in every engine's pool on
    // the node are not yet the user's (no kernel code has run before this point).
    if (!tight) {
      tighten(spec, !spec.reference);
      tight = true;
    }
    if (cmd == kPing || cmd == kWake) {
      // The library as in a user's loop: its pool awake, its inputs cached. A kernel gets
      // no untimed call (it could hand it the answer): the command is answered at once.
      // (Waking a kernel's OpenMP pool here by an empty parallel region was measured on
      // 16 cores: no steadier, and its spinning threads blurred the CPU-time bound.)
      if (cmd == kWake && spec.reference) {
        spec.task->wake_reference(entry, *spec.stage);
        // A library that starts its threads at its first call (BLIS's OpenMP team, FFTW's
        // threads) has them now: one per core, as those started at load.
        if (!repinned) pin_threads(every_core);
        repinned = true;
      }
      send_record(kPong, "", 0);
      continue;
    }
    const double t0 = files::monotonic_seconds();
    task.invoke(entry, *spec.stage);
    const double t1 = files::monotonic_seconds();
    DoneRecord done{call++, 0, t1 - t0};
    send_record(kDone, &done, sizeof done);
  }
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string syscall_name(int nr) {
  char* n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  std::string s = n ? n : "system call " + std::to_string(nr);
  free(n);
  return s;
}

}  // namespace bench::detail
