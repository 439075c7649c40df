// The evaluation process is an image of its own, and no crash (of it, of a kernel's
// child, of a compiler) breaks a later evaluation, in this engine or the next.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/bench.hpp"
#include "files/files.hpp"
#include "support.hpp"

using namespace bench;
namespace fs = std::filesystem;

namespace {

const char* kNaive = R"(
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
})";

EvalOptions small() {
  EvalOptions o;
  o.backend = "gcc";
  o.problem = {{"M", 32}, {"N", 32}, {"K", 32}};
  return o;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Kills the evaluation process `delay` after the call starts, from another thread.
Result evaluate_killed_after(const std::string& src, EvalOptions o, std::chrono::milliseconds delay,
                             std::string& killed_root) {
  start_zygote();
  int victim = zygote_pid();
  killed_root = bench_test::zygote_root(victim);
  std::thread killer([&] {
    std::this_thread::sleep_for(delay);
    kill(victim, SIGKILL);
  });
  Result r = evaluate(src, o);
  killer.join();
  CHECK(zygote_pid() != victim);
  return r;
}

}  // namespace

TEST_CASE("the evaluation process is a program of its own, without the engine's libraries") {
  start_zygote();
  int pid = zygote_pid();
  REQUIRE(pid > 0);
  CHECK(fs::read_symlink("/proc/" + std::to_string(pid) + "/exe") != fs::read_symlink("/proc/self/exe"));
  std::string maps = slurp("/proc/" + std::to_string(pid) + "/maps");
  REQUIRE(!maps.empty());
  for (const char* lib : {"libtorch", "openblas", "libblas", "libcuda"}) {
    INFO(lib);
    CHECK(maps.find(lib) == std::string::npos);
  }
  CHECK_FALSE(bench_test::zygote_root(pid).empty());
}

TEST_CASE("evaluations start from a program that already runs threads") {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  auto r = evaluate(kNaive, small());
  stop = true;
  busy.join();
  INFO(r.message);
  CHECK(r.status == "ok");
}

TEST_CASE("a killed evaluation process is replaced, and its tree removed") {
  auto first = evaluate(kNaive, small());
  REQUIRE(first.status == "ok");
  int old = zygote_pid();
  std::string old_root = bench_test::zygote_root(old);
  REQUIRE(!old_root.empty());
  kill(old, SIGKILL);
  auto again = evaluate(kNaive, small());
  INFO(again.message);
  CHECK(again.status == "ok");
  CHECK(zygote_pid() != old);
  CHECK_FALSE(fs::exists(old_root));
}

TEST_CASE("killing the evaluation process mid-compile or mid-run loses only that attempt") {
  std::string root;
  SECTION("mid-compile") {
    // A kernel gcc takes a while over: the kill lands while compiling.
    std::string heavy = kNaive;
    for (int i = 0; i < 300; ++i)
      heavy += "\nstatic double f" + std::to_string(i) + "(double x) { return x * " + std::to_string(i) +
               " + __builtin_sqrt(x); }";
    auto r = evaluate_killed_after(heavy, small(), std::chrono::milliseconds(30), root);
    INFO(r.message);
    CHECK(r.status == "ok");
  }
  SECTION("mid-run") {
    EvalOptions o = small();
    o.timeout = 1;
    auto r = evaluate_killed_after(
        "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) { for (;;); }", o,
        std::chrono::milliseconds(400), root);
    INFO(r.message);
    CHECK(r.status == "timeout");
  }
  // A compiler orphaned by the kill may still write into the old tree for a moment; the
  // next requests sweep it once its owner's lock is free.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(evaluate(kNaive, small()).status == "ok");
    gone = !fs::exists(root);
  }
  CHECK(gone);
}

TEST_CASE("trees that crashed processes left behind are removed; live ones are not") {
  const std::string base = files::temp_base();
  // A crashed evaluation process of this version: its lock file is free.
  const std::string stale = base + "/engine-zygote-stale" + std::to_string(getpid());
  fs::create_directories(stale + "/kernel-abc/libgccjit-x");
  std::ofstream(stale + "/.owner");
  std::ofstream(stale + "/kernel-abc/kernel.c") << "int x;";
  std::ofstream(stale + "/kernel-abc/libgccjit-x/fake.so") << "ELF";
  // One of an earlier version, named after a process id that no longer exists.
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string legacy = base + "/engine-kernel-" + std::to_string(dead) + "-AbCdEf";
  fs::create_directories(legacy);
  std::ofstream(legacy + "/kernel.so") << "ELF";
  // A live owner (this process) whose tree must survive.
  files::OwnedDir live(base, "engine-zygote");
  std::ofstream(live.path() + "/kernel.c") << "int y;";

  start_zygote();
  kill(zygote_pid(), SIGKILL);  // the next evaluation starts a fresh one, which sweeps
  auto r = evaluate(kNaive, small());
  INFO(r.message);
  CHECK(r.status == "ok");
  CHECK_FALSE(fs::exists(stale));
  CHECK_FALSE(fs::exists(legacy));
  CHECK(fs::exists(live.path() + "/kernel.c"));
}
