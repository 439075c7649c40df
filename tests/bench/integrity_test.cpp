// Integrity of the measurement itself: inputs no kernel can predict, CPU time counted from
// outside during each call, and a clock only the evaluation process reads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "task/keystream.hpp"
#include "bench/machine.hpp"
#include "task/task.hpp"
#include "support.hpp"

using namespace bench;

namespace {

std::vector<double> inputs_of(Task& task, int call) {
  Stage s = task.make_stage();
  task.load_call(s, call);
  std::vector<double> a(s.inputs[0].data(), s.inputs[0].data() + s.inputs[0].bytes() / sizeof(double));
  a.insert(a.end(), s.inputs[1].data(), s.inputs[1].data() + s.inputs[1].bytes() / sizeof(double));
  return a;
}

}  // namespace

TEST_CASE("keystreams: values from -1 up to 1, a stream per call and buffer, a key per draw") {
  auto key = Keystream::random();
  std::vector<double> a(1000), b(1000), c(1000);
  key.fill_signed_unit(0, 0, a.data(), a.size());
  key.fill_signed_unit(1, 0, b.data(), b.size());
  key.fill_signed_unit(0, 1, c.data(), c.size());
  for (double x : a) CHECK((x >= -1 && x < 1));
  CHECK(a != b);
  CHECK(a != c);
  std::vector<double> again(1000);
  key.fill_signed_unit(0, 0, again.data(), again.size());
  CHECK(a == again);
  auto other = Keystream::random();
  other.fill_signed_unit(0, 0, again.data(), again.size());
  CHECK(a != again);
  // A fixed seed gives the same values everywhere; word() is the stream fill() reads.
  auto s1 = Keystream::seeded(7), s2 = Keystream::seeded(7);
  s1.fill_signed_unit(3, 0, a.data(), 9);
  s2.fill_signed_unit(3, 0, b.data(), 9);
  CHECK(std::equal(a.begin(), a.begin() + 9, b.begin()));
  CHECK(a[8] == 2 * (static_cast<double>(s1.word(3, 0, 8) >> 11) * 0x1.0p-53) - 1);
}

TEST_CASE("every set of inputs is drawn under a new key unless a seed fixes it") {
  nlohmann::json problem = {{"M", 8}, {"N", 8}, {"K", 8}};
  auto first = make_task(problem), second = make_task(problem);
  CHECK_THAT(first->describe(), Catch::Contains("seed random"));
  CHECK_FALSE(first->options().contains("seed"));
  first->prepare(3, 1);
  second->prepare(3, 1);
  auto call0 = inputs_of(*first, 0), call1 = inputs_of(*first, 1);
  CHECK(call0 != call1);
  CHECK(call0 != inputs_of(*second, 0));  // the same problem again: other values
  problem["seed"] = 11;
  auto s1 = make_task(problem), s2 = make_task(problem);
  s1->prepare(2, 1);
  s2->prepare(2, 1);
  CHECK(inputs_of(*s1, 1) == inputs_of(*s2, 1));
  CHECK(s1->options().at("seed") == 11);
}

// The answer of a kernel that ignores its inputs and recomputes them as they were once
// made (splitmix64 from seed 42) is wrong, through every back end.
TEST_CASE("a kernel that knows how inputs were once made earns nothing") {
  std::string src = bench_test::read_file(BENCH_HOSTILE_DIR "/known_seed_inputs.c");
  EvalOptions o;
  o.problem = {{"M", 32}, {"N", 32}, {"K", 32}};
  bench_test::each_backend(src, o, [](const Result& r) {
    CHECK(r.status == "verification_error");
    CHECK(r.gflops == 0);
  });
}

TEST_CASE("no call is timed below the evaluation process's clock less its round trip") {
  EvalOptions o;
  o.problem = {{"M", 96}, {"N", 96}, {"K", 96}};
  o.threads = 1;
  for (const char* file : {ENGINE_TEST_KERNELS "/k01_naive_ijk.c", BENCH_INTEGRITY_DIR "/self_driven_calls.c"}) {
    bench_test::each_backend(bench_test::read_file(file), o, [](const Result& r) {
      // The kernel driving the calls itself would take a wake-up command for a call and
      // answer out of turn: refused. A kernel gets none, so it is let through, and its
      // claims do not count.
      if (r.status == "rejected") {
        CHECK_THAT(r.message, Catch::Contains("result channel"));
        return;
      }
      REQUIRE(r.status == "ok");
      REQUIRE(r.times.size() == r.harness_times.size());
      for (size_t i = 0; i < r.times.size(); ++i) {
        CHECK(r.times[i] >= r.harness_times[i] - r.round_trip - 1e-12);
        CHECK(r.times[i] <= r.harness_times[i]);
      }
      CHECK(r.min > 1e-5);  // a claim of a microsecond changed nothing: 96^3 naive takes far longer
    }, file);
  }
}

// CPU time is read from outside, so it needs the threads to run at once: with one core
// there is nothing extra to gain and nothing to see.
TEST_CASE("more threads than allowed are refused however briefly they ran", "[serial]") {
  EvalOptions o;
  o.threads = 1;
  o.runs = o.max_runs = 8;  // any call that ran wide is enough
  o.problem = {{"M", 192}, {"N", 192}, {"K", 192}};
  const bool spare_core = machine().cores >= 2;
  for (const char* file : {"/extra_threads_paused.c", "/raw_clone_threads.c"})
    bench_test::each_backend(bench_test::read_file(std::string(BENCH_INTEGRITY_DIR) + file), o, [&](const Result& r) {
      if (spare_core) {
        CHECK(r.status == "rejected");
        CHECK_THAT(r.message, Catch::Contains("more threads than allowed"));
        CHECK(r.gflops == 0);
      } else {
        CHECK(r.status == "ok");
      }
    }, file);
}

TEST_CASE("one call over the CPU-time bound is not timed; a second refuses the kernel", "[serial]") {
  EvalOptions o;
  o.threads = 1;
  o.warmup = 1;
  o.runs = o.max_runs = 6;
  o.problem = {{"M", 192}, {"N", 192}, {"K", 192}};
  const bool spare_core = machine().cores >= 2;
  const std::string once = bench_test::read_file(BENCH_INTEGRITY_DIR "/extra_threads_some_calls.c");
  std::string twice = once;
  twice.replace(twice.find("WIDE_CALLS 1"), 12, "WIDE_CALLS 2");
  for (const auto& backend : bench_test::engine_backends()) {
    o.backend = backend;
    auto rec = evaluate_records({once}, o).at(0);
    INFO(backend << ", one wide call: " << rec.dump().substr(0, 400));
    REQUIRE(rec.at("status") == "ok");
    CHECK(rec.at("times").size() == 6);  // the wide call's place taken by one more
    CHECK(rec.at("calls_over_cpu_bound").get<int>() == (spare_core ? 1 : 0));
    auto r = evaluate(twice, o);
    INFO(backend << ", two wide calls: " << r.status << ": " << r.message);
    if (spare_core) {
      CHECK(r.status == "rejected");
      CHECK_THAT(r.message, Catch::Contains("more threads than allowed") && Catch::Contains("an earlier call"));
    } else {
      CHECK(r.status == "ok");
    }
  }
}

TEST_CASE("honest OpenMP kernels within their threads are not refused for their CPU time", "[serial]") {
  std::string src = bench_test::read_file(ENGINE_TEST_KERNELS "/k02_ikj_omp.c");
  EvalOptions o;
  o.problem = {{"M", 160}, {"N", 160}, {"K", 160}};
  o.runs = 5;
  std::set<int> counts = {1, machine().cores};
  for (int threads : counts)
    for (const auto& backend : bench_test::engine_backends()) {
      o.threads = threads;
      o.backend = backend;
      auto r = evaluate(src, o);
      INFO(backend << " with " << threads << " threads: " << r.status << ": " << r.message);
      CHECK(r.status == "ok");
    }
}

// Work in an untimed window before a call: a helper thread started at the first call
// (within the kernel's two threads) watches the inputs and starts computing the moment it
// sees a call's, then holds 4 ms of its own clock before publishing. The inputs are
// written while every thread of the process is stopped and the timed window opens before
// the process continues, so the helper's whole work lies inside each call's span on the
// evaluation's clock: a span below 4 ms would be a head start. Causal (the window opens
// before anything of the process can see the inputs), so no load can make it flake. The
// honest twin, told to work by the call itself, passes the same way.
TEST_CASE("a helper thread watching the inputs gets no head start before a timed call", "[serial]") {
  constexpr double kHold = 0.004;
  EvalOptions o;
  o.threads = 2;
  o.warmup = 1;
  o.runs = o.max_runs = 12;  // with an untimed window before the call, some fall short
  o.problem = {{"M", 48}, {"N", 48}, {"K", 48}};
  for (const char* file : {"/head_start_helper.c", "/head_start_honest.c"})
    bench_test::each_backend(bench_test::read_file(std::string(BENCH_INTEGRITY_DIR) + file), o, [&](const Result& r) {
      REQUIRE(r.status == "ok");
      REQUIRE(r.harness_times.size() == 12);
      for (size_t i = 0; i < r.harness_times.size(); ++i) {
        INFO("call " << i << ": " << r.harness_times[i] * 1e3 << " ms on the evaluation's clock");
        CHECK(r.harness_times[i] >= kHold);
        CHECK(r.times[i] >= kHold - r.round_trip);
      }
    }, file);
}

TEST_CASE("run-time CPU dispatch is allowed: libgcc's CPU model constructor is on the list") {
  CHECK(constructor_allowed("__cpu_indicator_init"));
  CHECK_FALSE(constructor_allowed("frame_dummy"));
  std::string src = bench_test::read_file(BENCH_INTEGRITY_DIR "/cpu_dispatch.c");
  EvalOptions o;
  o.problem = {{"M", 48}, {"N", 48}, {"K", 48}};
  bench_test::each_backend(src, o, [](const Result& r) { CHECK(r.status == "ok"); });
}
