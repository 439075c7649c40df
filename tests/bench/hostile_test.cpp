// Hostile kernels: each is classified with a clear reason and leaves no process, file
// or directory behind, and the zygote keeps working after each.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/bench.hpp"
#include "files/files.hpp"
#include "support.hpp"

using namespace bench;
namespace fs = std::filesystem;

TEST_CASE("hostile kernels are classified and leave nothing behind") {
  auto files = bench_test::kernel_files(BENCH_HOSTILE_DIR);
  EvalOptions o;
  o.backend = "gcc";  // the messages checked are the sandbox's and gcc's
  o.timeout = 3;
  o.compile_timeout = 5;
  o.memory_mb = 256;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  for (const auto& f : files) {
    for (const auto& leftover : bench_test::temp_entries("engine-hostile-")) files::remove_tree(std::filesystem::path(leftover).string());
    std::string src = bench_test::read_file(f);
    std::string want = bench_test::expected_status(src), text = bench_test::expected_message(src);
    REQUIRE(!want.empty());
    REQUIRE(!text.empty());
    auto r = evaluate(src, o);
    INFO(fs::path(f).filename().string() << ": " << r.status << ": " << r.message);
    CHECK(r.status == want);
    CHECK_THAT(r.message, Catch::Contains(text));
    // No trace: the zygote has no children left, its work directories are gone, and
    // nothing the kernel tried to create exists.
    int zygote = zygote_pid();
    REQUIRE(zygote > 0);
    CHECK(kill(zygote, 0) == 0);
    CHECK(bench_test::children_of(zygote).empty());
    CHECK(bench_test::temp_entries("engine-kernel-" + std::to_string(zygote) + "-").empty());
    CHECK(bench_test::temp_entries("engine-hostile-").empty());
  }
  // Still working, and still exact.
  auto ok = evaluate(bench_test::read_file(ENGINE_TEST_KERNELS "/k02_ikj_omp.c"), o);
  INFO(ok.message);
  CHECK(ok.status == "ok");
  CHECK(std::isfinite(ok.max_rel_error.value_or(HUGE_VAL)));  // checked; ok: within the bound
}

// One verdict whichever back end compiles: what the front end cannot compile (inline
// assembly, constructors, headers it lacks, macro bombs) goes to gcc and meets the same
// rules.
TEST_CASE("a hostile batch is classified kernel by kernel, the same through every back end") {
  auto files = bench_test::kernel_files(BENCH_HOSTILE_DIR);
  std::vector<std::string> srcs;
  for (const auto& f : files) srcs.push_back(bench_test::read_file(f));
  srcs.push_back(bench_test::read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"));
  for (const auto& backend : bench_test::engine_backends()) {
    EvalOptions o;
    o.backend = backend;
    o.timeout = 3;
    o.compile_timeout = 5;
    o.memory_mb = 256;
    o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
    auto results = evaluate_batch(srcs, o);
    REQUIRE(results.size() == srcs.size());
    for (size_t i = 0; i + 1 < srcs.size(); ++i) {
      INFO(backend << " " << files[i] << ": " << results[i].message);
      CHECK(results[i].status == bench_test::expected_status(srcs[i]));
    }
    CHECK(results.back().status == "ok");
  }
  CHECK(bench_test::children_of(zygote_pid()).empty());
  for (const auto& leftover : bench_test::temp_entries("engine-hostile-")) files::remove_tree(std::filesystem::path(leftover).string());
}

// The reward hacks peers have seen, one kernel of ours for each, through both back ends
// (the in-memory one hands inline assembly to gcc): none earns a reward.
TEST_CASE("reward hacks get the same failing status from every back end") {
  EvalOptions o;
  o.timeout = 3;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  for (const char* name : {"cache_across_calls", "predicted_points", "single_precision", "forged_timing",
                           "forged_result", "work_after_return", "nan_untouched", "stdio_call"}) {
    std::string src = bench_test::read_file(std::string(BENCH_HOSTILE_DIR) + "/" + name + ".c");
    bench_test::each_backend(src, o, [&](const Result& r) {
      CHECK(r.status == bench_test::expected_status(src));
      CHECK_THAT(r.message, Catch::Contains(bench_test::expected_message(src)));
      CHECK(r.gflops == 0);
    }, name);
  }
}

// One rule for every back end: no code of the kernel's runs before its first call. A
// kernel defining _init (DT_INIT, run by the loader) sets a flag its result depends on, so
// it would verify had its _init run; each back end inspects the linked object before
// loading it and refuses it itself (the in-memory one compiles it, no fallback). The same
// set-up done by the kernel at its first call is its own business.
TEST_CASE("load-time code is refused by every back end, and the same set-up at the first call is not") {
  const std::string honest = R"(
static double ran;
static void set_up(void) { ran = 1; }
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    if (!ran) set_up();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 1 - ran;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
)";
  EvalOptions o;
  o.timeout = 3;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  for (const auto& backend : bench_test::engine_backends()) {
    o.backend = backend;
    for (const char* name : {"init_function", "fini_function"}) {
      std::string src = bench_test::read_file(std::string(BENCH_HOSTILE_DIR) + "/" + name + ".c");
      auto r = evaluate(src, o);
      INFO(name << " via " << backend << ": " << r.status << ": " << r.message);
      CHECK(r.status == "library_violation");
      CHECK(r.backend == backend);
      CHECK_THAT(r.message, Catch::Contains(std::string(name) == "init_function" ? "(DT_INIT)" : "(DT_FINI)"));
      CHECK_THAT(r.message, Catch::Contains("code that would run when the kernel is loaded"));
      CHECK(r.gflops == 0);
    }
    auto r = evaluate(honest, o);
    INFO("the honest twin via " << backend << ": " << r.status << ": " << r.message);
    CHECK(r.status == "ok");
    CHECK(r.backend == backend);
  }
}

TEST_CASE("the double-precision bound separates single from double precision") {
  EvalOptions o;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  auto single = evaluate(bench_test::read_file(BENCH_HOSTILE_DIR "/single_precision.c"), o);
  INFO(single.message);
  CHECK(single.status == "verification_error");
  CHECK(single.max_rel_error.value_or(0) > 1e-9);
  // Honest double-precision kernels, in any summation order, stay inside it.
  o.timeout = 60;  // the machine may be shared: slow is not wrong
  for (const char* k : {"/k01_naive_ijk.c", "/k02_ikj_omp.c", "/k03_blocked_collapse.c"}) {
    for (const char* mode : {"fp64", "paper"}) {
      o.verify = mode;
      auto honest = evaluate(bench_test::read_file(std::string(ENGINE_TEST_KERNELS) + k), o);
      INFO(k << " " << mode << ": " << honest.status << ": " << honest.message);
      // The verdict is the bound's, element by element. No bound on the largest relative
      // error: an element that cancels to near zero carries a large one and is still right.
      CHECK(honest.status == "ok");
    }
  }
}

TEST_CASE("threads left running after the call are refused even within the pool's size") {
  // With one thread allowed, any thread the kernel leaves behind is refused outright.
  std::string src = bench_test::read_file(BENCH_HOSTILE_DIR "/work_after_return.c");
  EvalOptions o;
  o.backend = "gcc";
  o.threads = 1;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  auto r = evaluate(src, o);
  INFO(r.message);
  CHECK(r.status == "rejected");
  CHECK_THAT(r.message, Catch::Contains("OpenMP pool"));
}

TEST_CASE("a kernel cannot read host files into its code or its diagnostics") {
  const std::string data = files::temp_base() + "/engine-host-data-" + std::to_string(getpid()) + ".h";
  {
    std::ofstream f(data);
    f << "\"the host's secret\"\n";
  }
  const std::string src = "static const char leak[] =\n#include \"" + data +
                          "\"\n;\nvoid matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
                          "  for (int i = 0; i < M * N; i++) C[i] = leak[i % sizeof leak];\n}\n";
  EvalOptions o;
  o.problem = {{"M", 16}, {"N", 16}, {"K", 16}};
  for (const auto& backend : bench_test::engine_backends()) {
    o.backend = backend;
    auto r = evaluate(src, o);
    INFO(backend << ": " << r.status << ": " << r.message);
    CHECK(r.status == "compile_error");
    CHECK(r.message.find("secret") == std::string::npos);
  }
  auto passwd = evaluate(bench_test::read_file(BENCH_HOSTILE_DIR "/include_host_file.c"), o);
  CHECK(passwd.message.find("root") == std::string::npos);
  std::remove(data.c_str());
}
