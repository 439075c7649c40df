// Hostile kernels: each is classified with a clear reason and leaves no process, file
// or directory behind, and the zygote keeps working after each.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>

#include "bench/bench.hpp"
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
    for (const auto& leftover : bench_test::temp_entries("engine-hostile-")) fs::remove_all(leftover);
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
  auto ok = evaluate(bench_test::read_file(ENGINE_SHARED_KERNELS "/k02_ikj_omp.c"), o);
  INFO(ok.message);
  CHECK(ok.status == "ok");
  CHECK(ok.max_rel_error.value_or(1) <= 1e-6);
}

TEST_CASE("a hostile batch is classified kernel by kernel") {
  auto files = bench_test::kernel_files(BENCH_HOSTILE_DIR);
  std::vector<std::string> srcs;
  for (const auto& f : files) srcs.push_back(bench_test::read_file(f));
  srcs.push_back(bench_test::read_file(ENGINE_SHARED_KERNELS "/k01_naive_ijk.c"));
  EvalOptions o;
  o.backend = "gcc";  // the messages checked are the sandbox's and gcc's
  o.timeout = 3;
  o.compile_timeout = 5;
  o.memory_mb = 256;
  o.problem = {{"M", 64}, {"N", 64}, {"K", 64}};
  auto results = evaluate_batch(srcs, o);
  REQUIRE(results.size() == srcs.size());
  for (size_t i = 0; i + 1 < srcs.size(); ++i) {
    INFO(files[i] << ": " << results[i].message);
    CHECK(results[i].status == bench_test::expected_status(srcs[i]));
  }
  CHECK(results.back().status == "ok");
  CHECK(bench_test::children_of(zygote_pid()).empty());
  for (const auto& leftover : bench_test::temp_entries("engine-hostile-")) fs::remove_all(leftover);
}
