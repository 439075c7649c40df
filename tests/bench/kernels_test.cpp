// The labelled example kernels and the evaluation's guarantees on real kernels.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "support.hpp"

using namespace bench;
using bench_test::read_file;

TEST_CASE("every labelled kernel gets the status its first line names with every back end") {
  auto files = bench_test::kernel_files(ENGINE_TEST_KERNELS);
  std::vector<std::string> hang, rest;  // the hangs get a short timeout, the rest a long one
  std::vector<std::string> hang_src, rest_src;
  for (const auto& f : files) {
    std::string src = read_file(f);
    REQUIRE(!bench_test::expected_status(src).empty());
    (bench_test::expected_status(src) == "timeout" ? hang : rest).push_back(f);
    (bench_test::expected_status(src) == "timeout" ? hang_src : rest_src).push_back(src);
  }
  for (const auto& backend : bench_test::engine_backends()) {
    for (auto [list, srcs, timeout] : {std::tuple{&hang, &hang_src, 1.5}, std::tuple{&rest, &rest_src, 60.0}}) {
      EvalOptions o;
      o.backend = backend;
      o.timeout = timeout;  // the machine may be shared: slow is not wrong
      // At most 4 threads: k07 opens a parallel region per element, and with all 16 cores
      // of the GPU machine shared by a parallel ctest its spinning barriers ran past 60 s.
      o.threads = std::min(machine().cores, 4);
      auto results = evaluate_batch(*srcs, o);
      REQUIRE(results.size() == list->size());
      for (size_t i = 0; i < results.size(); ++i) {
        INFO(backend << " " << (*list)[i] << ": " << results[i].message);
        CHECK(results[i].status == bench_test::expected_status((*srcs)[i]));
        if (results[i].status == "ok") {
          CHECK(results[i].gflops > 0);
          CHECK(results[i].times.size() >= 3);  // more while their spread is large
          CHECK(results[i].times.size() <= 10);
          // checked and finite; the bound itself is element by element, so an element near
          // zero may carry a large relative error and still be right
          CHECK(std::isfinite(results[i].max_rel_error.value_or(HUGE_VAL)));
          CHECK(results[i].compile_ms > 0);
          CHECK(results[i].min <= results[i].median);
          CHECK(!results[i].backend.empty());
        }
      }
    }
  }
}

TEST_CASE("a result carries the options it was measured with") {
  EvalOptions o;
  o.opt = "O2";
  o.threads = 1;
  o.warmup = 0;
  o.runs = o.max_runs = 5;
  o.problem = {{"M", 64}, {"N", 48}, {"K", 80}, {"seed", 7}, {"c_init", "nan"}};
  o.verify = "fp64";
  auto r = evaluate(read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), o);
  INFO(r.message);
  REQUIRE(r.status == "ok");
  CHECK(r.times.size() == 5);
  CHECK(r.options["opt"] == "O2");
  CHECK(r.options["threads"] == 1);
  CHECK(r.options["runs"] == 5);
  CHECK(r.options["verify"] == "fp64");
  CHECK(r.options["problem"]["K"] == 80);
  CHECK(r.options["problem"]["c_init"] == "nan");
  CHECK(r.options["march"].get<std::string>().rfind("-march=", 0) == 0);
  // the one statistic: the fastest timed call
  CHECK(r.min == *std::min_element(r.times.begin(), r.times.end()));
  CHECK(r.gflops == Approx(2.0 * 64 * 48 * 80 / r.min * 1e-9).epsilon(1e-9));
}

// Whether this machine lets the evaluation count hardware events: a 'cpu' event source
// (many VMs have none) and a perf_event_paranoid the evaluation's user passes.
static bool hardware_counters_expected() {
  namespace fs = std::filesystem;
  if (!fs::exists("/sys/bus/event_source/devices/cpu") && !fs::exists("/sys/bus/event_source/devices/cpu_core"))
    return false;
  int level = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> level;
  return geteuid() == 0 || level <= 2;
}

TEST_CASE("counters are read from outside the kernel's process, threads included, or say why not", "[serial]") {
  EvalOptions o;
  o.threads = 2;
  o.warmup = 1;
  o.runs = o.max_runs = 4;
  o.problem = {{"M", 256}, {"N", 256}, {"K", 256}};
  auto r = evaluate(read_file(ENGINE_TEST_KERNELS "/k02_ikj_omp.c"), o);
  INFO(r.message);
  REQUIRE(r.status == "ok");
  INFO(r.counters.dump() + " " + r.counters_unavailable.dump());
  // Software counters work wherever perf_event_open may watch another process: always
  // for root; a user's evaluation may not watch its kernel, which drops privileges.
  if (geteuid() != 0 && !r.counters.contains("task_clock_ms")) {
    CHECK_THAT(r.counters_unavailable["task_clock_ms"].get<std::string>(), Catch::Contains("not permitted"));
    return;
  }
  REQUIRE(r.counters.contains("task_clock_ms"));
  CHECK(r.counters.contains("page_faults"));
  CHECK(r.counters.contains("context_switches"));
  // Both OpenMP threads are counted (they start after the counters are opened): a call's
  // CPU time is above one thread's share of the slowest call, at most two threads' of it
  // plus what they spin after it until they are stopped (up to about 1 ms each here; a
  // bound of 1 ms in all failed about one run in ten).
  const double slowest_ms = 1e3 * *std::max_element(r.times.begin(), r.times.end());
  const double fastest_ms = 1e3 * r.min;
  CHECK(r.counters["task_clock_ms"].get<double>() > 1.1 * fastest_ms);
  CHECK(r.counters["task_clock_ms"].get<double>() < 2.2 * slowest_ms + 3.0);
  for (const char* name : {"cycles", "instructions", "l1d_read_misses", "llc_misses"}) {
    if (hardware_counters_expected()) {
      CHECK(r.counters.contains(name));
      if (r.counters.contains(name)) CHECK(r.counters[name].get<double>() > 0);
    } else {
      // what cannot be counted says why, and nothing pretends to a count
      CHECK_FALSE(r.counters.contains(name));
      REQUIRE(r.counters_unavailable.contains(name));
      CHECK_THAT(r.counters_unavailable[name].get<std::string>(), Catch::Contains("PMU") || Catch::Contains("paranoid"));
    }
  }
  if (r.counters.contains("instructions")) {
    // 2 M^3 flops at most 16 a vector instruction: far more instructions than that /16
    CHECK(r.counters["instructions"].get<double>() > 2.0 * 256 * 256 * 256 / 16);
  }
  // Vector widths: counted on Intel CPUs with a PMU, else each says why.
  for (const char* name : {"fp_scalar_double", "fp_128b_double", "fp_256b_double", "fp_512b_double"})
    CHECK((r.counters.contains(name) || r.counters_unavailable.contains(name)));
}

TEST_CASE("NaN-filled C catches a kernel that accumulates into C without clearing it") {
  const std::string src =
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  for (int i = 0; i < M; i++) for (int k = 0; k < K; k++) for (int j = 0; j < N; j++)\n"
      "    C[i * N + j] += A[i * K + k] * B[k * N + j];\n}\n";
  EvalOptions o;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}, {"c_init", "zero"}};
  CHECK(evaluate(src, o).status == "ok");
  o.problem["c_init"] = "nan";  // the default
  auto r = evaluate(src, o);
  CHECK(r.status == "verification_error");
  CHECK_THAT(r.message, Catch::Contains("nan"));
}

TEST_CASE("full verification finds an error the sampled points can miss") {
  // Wrong at one interior element only.
  const std::string src =
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {\n"
      "    double s = 0; for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];\n"
      "    C[i * N + j] = s; }\n"
      "  C[37 * N + 91] += 1.0;\n}\n";
  EvalOptions o;
  o.problem = {{"M", 128}, {"N", 128}, {"K", 64}};
  o.verify = "fp64";
  auto r = evaluate(src, o);
  CHECK(r.status == "verification_error");
  CHECK_THAT(r.message, Catch::Contains("C[37][91]"));
  CHECK(r.max_rel_error.value_or(0) > 1e-6);
}

TEST_CASE("guard pages turn writes past C into runtime errors") {
  // k04 steps j by 32: with N = 100 its last row's stores run past the end of C. It is
  // AVX-512 code: where the target has none, it is a compile error naming that.
  EvalOptions o;
  o.problem = {{"M", 50}, {"N", 100}, {"K", 40}};
  bench_test::each_backend(read_file(ENGINE_TEST_KERNELS "/k04_avx512_rows.c"), o, [](const Result& r) {
    if (machine().simd == "avx512") {
      CHECK(r.status == "runtime_error");
      CHECK_THAT(r.message, Catch::Contains("past the end of"));
    } else {
      CHECK(r.status == "compile_error");
      CHECK_THAT(r.message, Catch::Contains("512"));
    }
  });
}

TEST_CASE("OpenBLAS is measured as the reference the same way") {
  EvalOptions o;
  o.runs = o.max_runs = 4;
  auto r = reference(o);
  INFO(r.message);
  REQUIRE(r.status == "ok");
  CHECK(r.backend == "openblas");
  CHECK(r.gflops > 0);
  CHECK(r.times.size() == 4);
  CHECK(!r.thread_trials.empty());  // threads 0: the fastest count was looked for
  CHECK(r.max_rel_error.value_or(1) <= 1e-12);
}

// A kernel whose calls alternate between about 1 and 12 ms of spinning: a spread no number
// of calls brings under 5%.
static const std::string kUneven =
    "static int calls;\n"
    "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
    "  unsigned long long t0, t, wait = (calls++ % 2) ? 2000000ULL : 24000000ULL; unsigned lo, hi;\n"
    "  __asm__ volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); t0 = ((unsigned long long)hi << 32) | lo;\n"
    "  do { __asm__ volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); t = ((unsigned long long)hi << 32) | lo; }\n"
    "  while (t - t0 < wait);\n"
    "  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {\n"
    "    double s = 0; for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];\n"
    "    C[i * N + j] = s; }\n}\n";

TEST_CASE("timed calls continue while their spread is above the bound, within the budget") {
  EvalOptions o;
  o.backend = "gcc";  // inline assembly
  o.threads = 1;
  o.warmup = 0;
  o.runs = 3;
  o.problem = {{"M", 8}, {"N", 8}, {"K", 8}};
  SECTION("a spread that stays large uses every call max_runs allows") {
    o.max_runs = 7;
    auto r = evaluate(kUneven, o);
    INFO(r.message);
    REQUIRE(r.status == "ok");
    CHECK(r.times.size() == 7);
    CHECK(r.cov > 0.05);
  }
  SECTION("a bound the spread is under stops at runs") {
    o.max_runs = 7;
    o.cov_target = 5;
    auto r = evaluate(kUneven, o);
    REQUIRE(r.status == "ok");
    CHECK(r.times.size() == 3);
  }
  SECTION("max_runs at runs or below: exactly runs, as in the paper") {
    o.max_runs = 2;
    auto r = evaluate(kUneven, o);
    REQUIRE(r.status == "ok");
    CHECK(r.times.size() == 3);
  }
  SECTION("the timeout is a budget, not a failure, for the extra calls") {
    o.max_runs = 60;
    o.timeout = 0.25;  // room for the runs, not for 60 calls of up to 12 ms
    auto r = evaluate(kUneven, o);
    INFO(r.message);
    REQUIRE(r.status == "ok");
    CHECK(r.times.size() >= 3);
    CHECK(r.times.size() < 60);
  }
}

TEST_CASE("a batch runs identical object code once, and the copies keep their own compile") {
  const std::string naive = read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c");
  EvalOptions o;
  o.threads = 1;
  o.problem = {{"M", 32}, {"N", 32}, {"K", 32}};
  auto results = evaluate_batch({naive, naive + "\n/* the same */\n", naive}, o);
  REQUIRE(results.size() == 3);
  for (const auto& r : results) REQUIRE(r.status == "ok");
  CHECK(!results[0].same_code_as);
  CHECK(results[1].same_code_as == size_t(0));
  CHECK(results[2].same_code_as == size_t(0));
  CHECK(results[1].times == results[0].times);
  CHECK(results[1].call_starts == results[0].call_starts);
  CHECK(results[1].compile_ms > 0);
  o.share = false;
  auto apart = evaluate_batch({naive, naive}, o);
  CHECK(!apart[1].same_code_as);
  CHECK(apart[1].call_starts != apart[0].call_starts);
}

TEST_CASE("the kernels of a batch take turns, and no two calls overlap") {
  // Each call spins about 20 ms on one thread, long enough for overlaps to show.
  const std::string spin =
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  unsigned long long t0, t; unsigned lo, hi;\n"
      "  __asm__ volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); t0 = ((unsigned long long)hi << 32) | lo;\n"
      "  do { __asm__ volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); t = ((unsigned long long)hi << 32) | lo; }\n"
      "  while (t - t0 < 40000000ULL);\n"
      "  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {\n"
      "    double s = 0; for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];\n"
      "    C[i * N + j] = s; }\n}\n";
  EvalOptions o;
  o.backend = "gcc";  // inline assembly
  o.threads = 1;
  o.warmup = 0;
  o.runs = 2;
  o.max_runs = 2;
  o.problem = {{"M", 8}, {"N", 8}, {"K", 8}};
  o.share = false;  // six processes of one kernel, each run
  auto results = evaluate_batch(std::vector<std::string>(6, spin), o);
  struct Call {
    double start, end;
    size_t kernel;
  };
  std::vector<Call> calls;
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    REQUIRE(r.status == "ok");
    REQUIRE(r.call_starts.size() == r.times.size());
    REQUIRE(r.harness_times.size() == r.times.size());
    for (size_t c = 0; c < r.times.size(); ++c) {
      CHECK(r.call_starts[c] >= r.run_start);
      CHECK(r.call_starts[c] + r.harness_times[c] <= r.run_end);
      calls.push_back({r.call_starts[c], r.call_starts[c] + r.harness_times[c], k});
    }
  }
  std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.start < b.start; });
  REQUIRE(calls.size() == 12);
  for (size_t i = 1; i < calls.size(); ++i) CHECK(calls[i].start >= calls[i - 1].end);
  // Turns: every kernel's first call comes before any kernel's second.
  for (size_t i = 0; i < 6; ++i) CHECK(calls[i].kernel == i);
  for (size_t i = 6; i < 12; ++i) CHECK(calls[i].kernel == i - 6);
}

TEST_CASE("a batch keeps its order and mixes statuses") {
  std::vector<std::string> srcs = {read_file(ENGINE_TEST_KERNELS "/k12_calls_blas.c"),
                                   read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"),
                                   read_file(ENGINE_TEST_KERNELS "/k08_syntax_error.c"),
                                   read_file(ENGINE_TEST_KERNELS "/k09_wrong_result.c")};
  EvalOptions o;
  o.problem = {{"M", 96}, {"N", 96}, {"K", 96}};
  auto r = evaluate_batch(srcs, o);
  REQUIRE(r.size() == 4);
  CHECK(r[0].status == "library_violation");
  CHECK(r[1].status == "ok");
  CHECK(r[2].status == "compile_error");
  CHECK(r[3].status == "verification_error");
  CHECK(evaluate_batch({}, o).empty());
}

TEST_CASE("what the allow-list admits runs: threadprivate libm allocation memcpy") {
  // Each row goes through a buffer of its own: allocation, copies, libm and thread-local
  // storage in every OpenMP thread.
  const std::string src =
      "#include <math.h>\n#include <omp.h>\n#include <stdlib.h>\n#include <string.h>\n"
      "static double acc;\n#pragma omp threadprivate(acc)\n"
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  #pragma omp parallel for\n"
      "  for (int i = 0; i < M; i++) {\n"
      "    double *row = malloc(sizeof(double) * N);\n"
      "    for (int j = 0; j < N; j++) {\n"
      "      acc = 0;\n"
      "      for (int k = 0; k < K; k++) acc += A[i * K + k] * B[k * N + j];\n"
      "      row[j] = copysign(sqrt(acc * acc), acc);\n"
      "    }\n"
      "    memcpy(C + (long)i * N, row, sizeof(double) * (N / 2));\n"
      "    memmove(C + (long)i * N + N / 2, row + N / 2, sizeof(double) * (N - N / 2));\n"
      "    free(row);\n"
      "  }\n}\n";
  // 16 threads whatever the cores: glibc reads the CPU count from /sys when a ninth thread
  // allocates, which the sandbox must have made it do before.
  for (int threads : {0, 16}) {
    EvalOptions o;
    o.backend = "gcc";
    o.threads = threads;
    o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
    auto r = evaluate(src, o);
    INFO(threads << " threads: " << r.message);
    CHECK(r.status == "ok");
    // Every reference admitted. Which ones the object makes is the compiler's choice (on
    // the GPU machine gcc 13 left out one that gcc 12 makes), so they are shown, not
    // prescribed.
    std::string refs;
    for (const auto& s : r.external_symbols) refs += s + " ";
    INFO("references: " << refs);
    CHECK(!r.external_symbols.empty());
    for (const auto& s : r.external_symbols) CHECK(symbol_allowed(s));
  }
}
