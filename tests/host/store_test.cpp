// The run store keeps every committed record exactly once, across reopen, crashes and
// torn writes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/store.hpp"
#include "files/files.hpp"

namespace fs = std::filesystem;
using store::Json;

static fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("store_test_" + std::to_string(getpid())) / name;
  files::remove_tree(std::filesystem::path(dir).string());
  return dir;
}

static std::vector<Json> metrics_file(const fs::path& dir) {
  std::ifstream in(dir / "metrics.jsonl");
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

TEST_CASE("a new run writes its config and reopens with it", "[store]") {
  fs::path dir = fresh_dir("config");
  {
    auto run = store::Run::open(dir, {Json{{"lr", 5e-7}, {"opt", "O3"}}});
    CHECK_FALSE(run->resumed());
  }
  {
    auto again = store::Run::open(dir, {Json{{"lr", 5e-7}, {"opt", "O3"}}});
    CHECK(again->resumed());
    CHECK(again->config()["opt"] == "O3");
  }
  REQUIRE_THROWS_WITH(store::Run::open(dir, {Json{{"lr", 2e-7}, {"opt", "O3"}}}),
                      Catch::Contains("differs in: lr"));
  store::OpenOptions replace{Json{{"lr", 2e-7}}, true};
  CHECK(store::Run::open(dir, replace)->config()["lr"] == 2e-7);
}

TEST_CASE("samples are stored, queried and traced to their roots", "[store]") {
  auto run = store::Run::open(fresh_dir("samples"));
  store::Sample seed;
  seed.status = "ok";
  seed.gflops = 10;
  seed.stage = 1;
  int64_t a = run->add_sample(seed);
  store::Sample child = seed;
  child.parent_id = a;
  child.gflops = 30;
  child.iteration = 1;
  child.timings = Json{{"times", {0.1, 0.2}}};
  int64_t b = run->add_sample(child);
  child.parent_id = b;
  child.gflops = std::nullopt;
  child.status = "compile_error";
  int64_t c = run->add_sample(child);

  auto best = run->samples({.order_by = "gflops", .descending = true, .limit = 1});
  REQUIRE(best.size() == 1);
  CHECK(best[0].id == b);
  CHECK(best[0].timings["times"][1] == 0.2);
  CHECK(run->count({.status = std::string("compile_error")}) == 1);
  CHECK(run->count({.iteration = 1}) == 2);
  auto chain = run->lineage(c);
  REQUIRE(chain.size() == 3);
  CHECK(chain[0].id == a);
  CHECK(chain[2].id == c);
  store::Sample orphan = seed;
  orphan.parent_id = 999;
  CHECK_THROWS_WITH(run->add_sample(orphan), Catch::Contains("parent sample 999"));
  CHECK_THROWS_WITH(run->samples({.order_by = "name; DROP TABLE samples"}),
                    Catch::Contains("cannot order"));
}

TEST_CASE("a rolled-back transaction leaves no record anywhere", "[store]") {
  fs::path dir = fresh_dir("rollback");
  auto run = store::Run::open(dir);
  run->begin();
  run->log(Json{{"step", 1}});
  store::Sample s;
  s.status = "ok";
  run->add_sample(s);
  run->set("step", 1);
  run->rollback();
  CHECK(run->metrics().empty());
  CHECK(metrics_file(dir).empty());
  CHECK(run->count() == 0);
  CHECK_FALSE(run->get("step"));
}

TEST_CASE("a run killed inside a step resumes after the last committed step", "[store]") {
  fs::path dir = fresh_dir("kill");
  { store::Run::open(dir); }
  pid_t pid = fork();
  if (pid == 0) {
    auto run = store::Run::open(dir);
    for (int step = 1;; ++step) {
      run->begin();
      store::Sample s;
      s.status = "ok";
      s.iteration = step;
      run->add_sample(s);
      run->log(Json{{"step", step}});
      if (step == 3) kill(getpid(), SIGKILL);  // dies with step 3 uncommitted
      run->set("step", step);
      run->commit();
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  auto run = store::Run::open(dir);
  CHECK(run->get("step") == Json(2));
  CHECK(run->count() == 2);
  auto lines = metrics_file(dir);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1]["step"] == 2);
}

TEST_CASE("a torn metrics line is cut and committed lines missing from the file are restored",
          "[store]") {
  fs::path dir = fresh_dir("torn");
  {
    auto run = store::Run::open(dir);
    for (int i = 1; i <= 3; ++i) run->log(Json{{"step", i}});
  }
  // Simulate a crash after the database commit of step 3 but mid-way through its line.
  std::string text;
  {
    std::ifstream in(dir / "metrics.jsonl");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  size_t second_end = text.find('\n', text.find('\n') + 1);
  std::ofstream(dir / "metrics.jsonl", std::ios::trunc) << text.substr(0, second_end + 1) << "{\"st";
  auto run = store::Run::open(dir);
  auto lines = metrics_file(dir);
  REQUIRE(lines.size() == 3);
  CHECK(lines[2]["step"] == 3);
  CHECK(lines[2]["_seq"] == 3);
  run->log(Json{{"step", 4}});
  CHECK(metrics_file(dir).size() == 4);
}

TEST_CASE("checkpoints appear whole or not at all", "[store]") {
  fs::path dir = fresh_dir("ckpt");
  auto run = store::Run::open(dir);
  fs::path staging = run->begin_checkpoint("step-10");
  std::ofstream(staging / "weights.bin") << "w";
  CHECK(run->checkpoints().empty());
  CHECK_FALSE(fs::exists(run->checkpoint_path("step-10")));
  run->commit_checkpoint("step-10");
  CHECK(fs::exists(run->checkpoint_path("step-10") / "weights.bin"));
  CHECK(run->checkpoints() == std::vector<std::string>{"step-10"});
  CHECK_THROWS_WITH(run->begin_checkpoint("../escape"), Catch::Contains("invalid checkpoint"));
  CHECK_THROWS_WITH(run->commit_checkpoint("never"), Catch::Contains("was not begun"));
}

TEST_CASE("state values round-trip as JSON", "[store]") {
  auto run = store::Run::open(fresh_dir("state"));
  run->set("pool", Json{{"stage1", {1, 2, 3}}});
  run->set("step", 7);
  CHECK(run->get("pool")->at("stage1").size() == 3);
  CHECK(run->state()["step"] == 7);
  run->erase("step");
  CHECK_FALSE(run->get("step"));
}

// One engine at a time: the run's lock refuses a second writer, names the holder's pid,
// and vanishes with the holder, however it ends.
TEST_CASE("a second open of an open run is refused, in this process and in another", "[store]") {
  fs::path dir = fresh_dir("lock");
  std::string me = "pid " + std::to_string(getpid());
  CHECK_FALSE(store::lock_holder(dir));
  CHECK_FALSE(fs::exists(dir));  // asking creates nothing
  {
    auto run = store::Run::open(dir);
    CHECK(store::lock_holder(dir) == getpid());
    CHECK_THROWS_WITH(store::Run::open(dir),
                      Catch::Contains(dir.string()) && Catch::Contains("already open in this process") &&
                          Catch::Contains(me));
    CHECK_THROWS_AS(store::Run::open(dir), store::Locked);
  }
  CHECK_NOTHROW(store::Run::open(dir));  // closed: free again

  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t holder = fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    close(ready[0]);
    char ok = 'n';
    try {
      auto run = store::Run::open(dir);
      ok = 'y';
      (void)!write(ready[1], &ok, 1);
      for (;;) pause();  // holds the run until it is killed
    } catch (...) {
      (void)!write(ready[1], &ok, 1);
      _exit(1);
    }
  }
  close(ready[1]);
  char got = 0;
  REQUIRE(read(ready[0], &got, 1) == 1);
  close(ready[0]);
  REQUIRE(got == 'y');
  CHECK(store::lock_holder(dir) == holder);
  try {
    store::Run::open(dir);
    FAIL("a second engine opened a run in use");
  } catch (const store::Locked& e) {
    CHECK(e.pid == holder);
    CHECK_THAT(e.what(), Catch::Contains(dir.string()) &&
                             Catch::Contains("in use by another engine (pid " + std::to_string(holder) + ")"));
  }
  kill(holder, SIGKILL);
  int status = 0;
  waitpid(holder, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK_FALSE(store::lock_holder(dir));
  auto after = store::Run::open(dir);  // the kernel released the killed holder's lock
  CHECK(after->resumed());
}

TEST_CASE("a read-only open takes no lock and writes nothing", "[store]") {
  fs::path dir = fresh_dir("reader");
  CHECK_THROWS_WITH(store::Run::open(dir, {.read_only = true}), Catch::Contains("holds no run"));
  CHECK_FALSE(fs::exists(dir));
  auto writer = store::Run::open(dir, {Json{{"lr", 0.5}}});
  store::Sample s;
  s.status = "ok";
  writer->add_sample(s);
  writer->log(Json{{"step", 1}});
  auto reader = store::Run::open(dir, {.read_only = true});
  CHECK(reader->read_only());
  CHECK(reader->count() == 1);
  CHECK(reader->metrics().size() == 1);
  CHECK(reader->config()["lr"] == 0.5);
  CHECK_THROWS_WITH(reader->add_sample(s), Catch::Contains("opened read-only"));
  CHECK_THROWS_WITH(reader->log(Json{{"step", 2}}), Catch::Contains("opened read-only"));
  CHECK_THROWS_WITH(reader->set("step", 2), Catch::Contains("opened read-only"));
  writer->log(Json{{"step", 2}});
  CHECK(reader->metrics().size() == 2);  // it sees what the writer commits
}
