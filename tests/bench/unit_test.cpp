// The pieces of the evaluation that need no sandbox: the allow-list, the ELF reader, the
// gcc back end on its own, option checks, target detection, the back-end registry.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "cuda/cuda.hpp"
#include "compile/elf_reader.hpp"
#include "bench/machine.hpp"
#include "bench/peak.hpp"
#include "evaluator/verdict.hpp"
#include "task/rate_bound.hpp"
#include "task/timing_stats.hpp"
#include "support.hpp"
#include "test_backends.hpp"

using namespace bench;

TEST_CASE("the allow-list admits libm OpenMP allocation and memory functions only") {
  for (const char* ok : {"sqrt", "expf", "fmal", "lround", "lroundf", "GOMP_parallel", "GOMP_barrier",
                         "omp_get_thread_num", "malloc", "free", "posix_memalign", "aligned_alloc", "memcpy",
                         "memset", "memmove", "abs", "labs", "llabs", "_ZGVdN4v_exp"})
    CHECK(symbol_allowed(ok));
  for (const char* no : {"cblas_dgemm", "dgemm_", "system", "fopen", "printf", "fprintf", "socket", "fork",
                         "exit", "abort", "dlopen", "syscall", "pthread_create", "", "sqrtx", "omp_", "GOMP_",
                         "_ZGV"})
    CHECK_FALSE(symbol_allowed(no));
}

TEST_CASE("the allowed libraries are described from the list itself") {
  const std::string& text = allowed_libraries_text();
  CHECK(text.rfind("libm, ", 0) == 0);
  CHECK_THAT(text, Catch::Contains("malloc/calloc/realloc"));
  CHECK_THAT(text, Catch::Contains("memset/memcpy/memmove"));
  CHECK_THAT(text, Catch::Contains("the OpenMP runtime (omp_*, GOMP_*)"));
  CHECK_THAT(text, !Catch::Contains("__stack_chk_fail"));  // emitted by the compiler, not written
  // Every name the description shows is allowed.
  for (const auto& lib : allowed_libraries())
    for (const auto& s : lib.symbols) {
      INFO(s);
      CHECK(symbol_allowed(s));
      if (lib.shown && lib.name.empty()) CHECK_THAT(text, Catch::Contains(s));
    }
  CHECK(library_violation_message("printf") ==
        "call to 'printf', which is outside the allowed libraries: " + text);
}

TEST_CASE("remarks keep each loop's remark once, vectorised loops first, within the bound") {
  std::string path = (std::filesystem::temp_directory_path() / "engine-remarks-test.txt").string();
  {
    std::ofstream f(path);
    f << "kernel.c:9:7: missed: couldn't vectorize loop\n"
      << "kernel.c:9:7: missed: couldn't vectorize loop\n"  // once per vector size tried
      << "kernel.c:5:3: note: some detail\n"
      << "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n";
  }
  CHECK(read_remarks(path) ==
        "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n"
        "kernel.c:9:7: missed: couldn't vectorize loop\n");
  std::string cut = read_remarks(path, 70);
  CHECK(cut == "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n... (1 more)\n");
  std::filesystem::remove(path);
  CHECK(read_remarks(path).empty());  // no file: no remarks
  CHECK(remarks_flag("r.txt") == "-fopt-info-vec-optimized-missed=r.txt");
}

TEST_CASE("compile statuses have their wire names") {
  CHECK(std::string(to_string(CompileStatus::ok)) == "ok");
  CHECK(std::string(to_string(CompileStatus::compile_error)) == "compile_error");
  CHECK(std::string(to_string(CompileStatus::library_violation)) == "library_violation");
  CHECK(std::string(to_string(CompileStatus::unsupported)) == "unsupported");
}

TEST_CASE("the gcc back end compiles and loads a kernel and lists its references") {
  CompileOptions o;
  o.march = resolve_march("native");
  auto k = find_backend("gcc")->compile(
      "#include <math.h>\n#include <stdlib.h>\n"
      "double *keep;\n"
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  keep = malloc(8); keep[0] = sqrt(A[0]); C[0] = keep[0]; free(keep);\n}\n",
      o);
  INFO(k.diagnostics);
  REQUIRE(k.status == CompileStatus::ok);
  CHECK(k.backend == "gcc");
  CHECK(k.entry != nullptr);
  CHECK(k.compile_ms > 0);
  CHECK(std::find(k.external_symbols.begin(), k.external_symbols.end(), "malloc") != k.external_symbols.end());
  double A[1] = {4}, B[1] = {0}, C[1] = {0};
  reinterpret_cast<void (*)(double*, double*, double*, int, int, int)>(k.entry)(A, B, C, 1, 1, 1);
  CHECK(C[0] == 2.0);
}

TEST_CASE("the gcc back end refuses BLAS before loading and reports syntax errors by line") {
  auto blas = find_backend("gcc")->compile(bench_test::read_file(ENGINE_TEST_KERNELS "/k12_calls_blas.c"), {});
  CHECK(blas.status == CompileStatus::library_violation);
  CHECK(blas.entry == nullptr);
  CHECK_THAT(blas.diagnostics, Catch::Contains("cblas_dgemm"));
  auto syntax = find_backend("gcc")->compile(bench_test::read_file(ENGINE_TEST_KERNELS "/k08_syntax_error.c"), {});
  CHECK(syntax.status == CompileStatus::compile_error);
  CHECK_THAT(syntax.diagnostics, Catch::Contains("kernel.c:5:"));
  auto bad_opt = find_backend("gcc")->compile("void matmul_optimized(){}", CompileOptions{"O9"});
  CHECK(bad_opt.status == CompileStatus::compile_error);
  CHECK_THAT(bad_opt.diagnostics, Catch::Contains("O9"));
}

TEST_CASE("the ELF reader sees a constructor without loading the object") {
  auto k = find_backend("gcc")->compile(bench_test::read_file(BENCH_HOSTILE_DIR "/constructor.c"), {});
  // Loading it would spin forever in the constructor: the test finishing shows it was not.
  CHECK(k.status == CompileStatus::library_violation);
  CHECK_THAT(k.diagnostics, Catch::Contains("constructor"));
  CHECK_THROWS_WITH(read_elf_imports(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), Catch::Contains("not a valid"));
  CHECK_THROWS_WITH(read_elf_imports("/nonexistent.so"), Catch::Contains("cannot open"));
}

TEST_CASE("march resolves to explicit flags") {
  auto host = resolve_march("");
  REQUIRE(!host.empty());
  CHECK(host[0].rfind("-march=", 0) == 0);
  CHECK(host[0] != "-march=native");
  CHECK(resolve_march("native") == host);
  CHECK(resolve_march("skylake-avx512") == std::vector<std::string>{"-march=skylake-avx512"});
  CHECK(resolve_march("-march=x86-64-v3 -mfma") == std::vector<std::string>{"-march=x86-64-v3", "-mfma"});
  CHECK_THROWS_WITH(resolve_march("-O3"), Catch::Contains("not a target flag"));
  CHECK_THROWS_WITH(resolve_march("znver3; rm -rf /"), Catch::Contains("not a CPU name"));
  CHECK_THROWS_WITH(resolve_march("-march=native"), Catch::Contains("native"));
}

TEST_CASE("the machine reports cores ISA and a peak with its formula") {
  const auto& m = machine();
  CHECK(m.cores >= 1);
  CHECK(!m.cpu.empty());
  CHECK(m.peak_gflops > 0);
  CHECK_THAT(m.peak_formula, Catch::Contains("GFLOPS"));
  CHECK_THAT(m.peak_formula, Catch::Contains(std::to_string(m.cores) + " cores"));
  // Three of the widest vectors a cycle per core: 192 bytes with AVX-512, 96 with AVX2.
  CHECK(m.peak_gbps == Approx(m.cores * m.ghz * 24 * m.vector_doubles));
  CHECK_THAT(m.peak_gbps_formula, Catch::Contains("GB/s"));
}

TEST_CASE("a CUDA run's buffers travel as bytes of floats, NaN and all") {
  const std::vector<float> v{1.5f, -0.25f, std::nanf(""), 3e38f};
  const nlohmann::json blob = cuda::float_blob(v.data(), v.size());
  CHECK(blob.is_binary());
  const std::vector<float> back = cuda::floats_of(nlohmann::json::from_cbor(nlohmann::json::to_cbor(blob)));
  REQUIRE(back.size() == 4);
  CHECK(back[0] == 1.5f);
  CHECK(back[1] == -0.25f);
  CHECK(std::isnan(back[2]));
  CHECK(back[3] == 3e38f);
  CHECK(cuda::floats_of(nlohmann::json::array({1, 2.5})) == std::vector<float>{1.0f, 2.5f});
  CHECK_THROWS_WITH(cuda::floats_of(nlohmann::json::binary({1, 2, 3})), Catch::Contains("3 bytes"));
  CHECK_THROWS_WITH(cuda::floats_of(nlohmann::json::array({"x"})), Catch::Contains("not a number"));
  nlohmann::json list = nlohmann::json::array({blob});
  cuda::blobs_to_numbers(list);  // what a script sees
  REQUIRE(list[0].is_array());
  CHECK(list[0][1].get<double>() == -0.25);
  CHECK(std::isnan(list[0][2].get<double>()));
}

TEST_CASE("the event clock runs where the driver is, and names why not elsewhere") {
  const nlohmann::json gpu = cuda::probe();
  if (gpu.value("available", false)) {
    cuda::EventClock clock;
    clock.start();
    const cuda::EventClock::Reading r = clock.stop();  // nothing queued: a short span
    CHECK(r.events_ms >= 0);
    CHECK(r.wall_ms + 0.01 >= r.events_ms);  // the wall clock spans the events
  } else {
    CHECK_THROWS_WITH(cuda::EventClock(), gpu.value("reason", std::string("?")));
  }
}

TEST_CASE("the timed calls' median and CoV, one definition for every timing") {
  CHECK(bench::median({}) == 0);
  CHECK(bench::median({3, 1, 2}) == 2);
  CHECK(bench::median({4, 1, 3, 2}) == Approx(2.5));
  CHECK(bench::coefficient_of_variation({5}) == 0);
  CHECK(bench::coefficient_of_variation({2, 2, 2}) == 0);
  // mean 2, sample deviation 1
  CHECK(bench::coefficient_of_variation({1, 2, 3}) == Approx(0.5));
}

TEST_CASE("a rate beyond 4x the machine's peak FLOPs or byte rate is not a measurement") {
  using bench::impossible_rate;
  using bench::PeakRates;
  CHECK(impossible_rate(399, 1e6, PeakRates{100, 0}).empty());  // a peak of 0 bounds nothing
  CHECK(impossible_rate(399, 399, PeakRates{100, 100}).empty());
  CHECK(impossible_rate(401, 10, PeakRates{100, 100}) ==
        "the timings give 401 GFLOPS, more than 4x the machine's peak (100 GFLOPS): not a measurement");
  // A memory-bound task: no FLOPs (transpose), yet a figure can be impossible.
  CHECK_THAT(impossible_rate(0, 401, PeakRates{100, 100}),
             Catch::Contains("GB/s, more than 4x the fastest the machine's cores can move bytes (100 GB/s)"));
  CHECK(impossible_rate(0, 401, PeakRates{100, 0}).empty());
  // the GPU's judge names its own peaks
  const PeakRates gpu{100, 100, "the GPU's single-precision peak", "the GPU's memory bandwidth"};
  CHECK_THAT(impossible_rate(0, 401, gpu), Catch::Contains("more than 4x the GPU's memory bandwidth (100 GB/s)"));
}

TEST_CASE("the measured peak runs the target's widest vectors on every CPU and says how") {
  const auto& m = machine();
  MeasuredPeak p = measure_peak();
  CHECK(p.gflops > 0);
  CHECK(p.cpus == m.cores);
  CHECK(p.isa == m.simd);
  CHECK(p.per_cpu_gflops * p.cpus <= p.gflops * (1 + 1e-9));
  CHECK_THAT(p.method, Catch::Contains(std::to_string(m.cores) + " CPUs"));
  CHECK(p.date.size() == 10);
  CHECK(p.cache_file.empty());
  CHECK_FALSE(p.from_cache);
}

TEST_CASE("bad options are errors that name the option") {
  auto err = [](EvalOptions o) {
    try {
      check_options(o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EvalOptions o;
  o.opt = "O4";
  CHECK_THAT(err(o), Catch::Contains("opt must be one of O0, O1, O2, O3, Os, got 'O4'"));
  for (const auto& level : optimisation_levels()) {  // one list for every caller
    o.opt = level;
    CHECK(err(o) == "no error");
  }
  o = {};
  o.verify = "some";
  CHECK_THAT(err(o), Catch::Contains("verify"));
  o = {};
  o.runs = 0;
  CHECK_THAT(err(o), Catch::Contains("runs"));
  o = {};
  o.timeout = -1;
  CHECK_THAT(err(o), Catch::Contains("timeout"));
  o = {};
  o.backend = "clang";
  CHECK_THAT(err(o), Catch::Contains("unknown back end 'clang'"));
  o = {};
  o.problem = {{"M", 0}};
  CHECK_THAT(err(o), Catch::Contains("problem.M"));
  o.problem = {{"L", 3}};
  CHECK_THAT(err(o), Catch::Contains("unknown field 'L'"));
  o.problem = {{"c_init", "ones"}};
  CHECK_THAT(err(o), Catch::Contains("c_init"));
  o.problem = {{"kind", "fft"}};
  CHECK_THAT(err(o), Catch::Contains("unknown task 'fft'"));
  o = {};
  auto r = resolve_options(o);
  CHECK(r["threads"] == machine().cores);
  CHECK(r["problem"]["M"] == 256);
  CHECK(r["problem"]["c_init"] == "nan");
  CHECK(r["backend"] == default_backend());
}

TEST_CASE("a back end that says unsupported falls back to gcc and the result says so") {
  CHECK_THROWS_WITH(register_backend(std::make_unique<bench_test::Unsupported>()), Catch::Contains("already exists"));
  EvalOptions o;
  o.backend = "never";
  auto r = evaluate(bench_test::read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), o);
  INFO(r.message);
  CHECK(r.status == "ok");
  CHECK(r.backend == "gcc");
  CHECK(r.fallback);
  CHECK_THAT(r.fallback_reason, Catch::Contains("unimplemented"));
  CHECK(r.options["backend"] == "never");
}

TEST_CASE("the sandbox checks references whatever the back end claims") {
  EvalOptions o;
  o.backend = "careless";
  auto r = evaluate(bench_test::read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), o);
  CHECK(r.status == "library_violation");
  CHECK_THAT(r.message, Catch::Contains("cblas_dgemm"));
  CHECK(r.backend == "careless");
}

