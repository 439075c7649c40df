// Data-parallel training on CPU ranks (gloo): two ranks, each running half of a step's
// micro-batches, take the update one trainer takes over the whole step; a rank that stops
// ends its peers with an error that says so. The ranks are separate processes
// (tests/dist/rank.cpp), as they are in a real job.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dist/group.hpp"
#include "files/files.hpp"

namespace fs = std::filesystem;
extern char** environ;

namespace {

struct Job {
  fs::path dir;
  // files::remove_tree, not std::filesystem::remove_all (files.hpp says why).
  explicit Job(const std::string& name)
      : dir(fs::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    files::remove_tree(dir.string());
    fs::create_directories(dir);
  }
  ~Job() { files::remove_tree(dir.string()); }
};

// Starts dist_rank with its stderr in `err`.
pid_t start(const std::vector<std::string>& args, const fs::path& err) {
  std::vector<std::string> all = {DIST_RANK_EXE};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  return pid;
}

int finish(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<double> numbers(const fs::path& p) {
  std::ifstream in(p);
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

const std::string kModel = std::string(ENGINE_TRAIN_FIXTURE) + "/base";

// The ranks meet through a file, or over TCP at a port of this test's own.
void check_two_ranks_match_one(const std::string& mode, bool tcp = false) {
  Job job("dist_" + mode + (tcp ? "_tcp" : ""));
  const std::string store = tcp ? "tcp:127.0.0.1:" + std::to_string(20000 + getpid() % 20000)
                                : "file:" + (job.dir / "store").string();
  pid_t one = start({kModel, (job.dir / "one.txt").string(), "0", "0", "-", mode}, job.dir / "one.err");
  REQUIRE(finish(one) == 0);
  pid_t r0 = start({kModel, (job.dir / "r0.txt").string(), "0", "2", store, mode}, job.dir / "r0.err");
  pid_t r1 = start({kModel, (job.dir / "r1.txt").string(), "1", "2", store, mode}, job.dir / "r1.err");
  int rc0 = finish(r0), rc1 = finish(r1);
  if (!dist::available()) {
    // A build without gloo refuses a second rank, and says why.
    CHECK(rc0 == 1);
    CHECK(slurp(job.dir / "r0.err").find("built without gloo") != std::string::npos);
    return;
  }
  INFO(slurp(job.dir / "r0.err") << slurp(job.dir / "r1.err"));
  REQUIRE(rc0 == 0);
  REQUIRE(rc1 == 0);
  auto single = numbers(job.dir / "one.txt"), a = numbers(job.dir / "r0.txt"), b = numbers(job.dir / "r1.txt");
  REQUIRE(single.size() == 38);  // 2 losses, then 2 x (3 + 4 + 5 + 6) log-probs
  CHECK(max_diff(a, b) == 0.0);        // replicas stay identical
  CHECK(max_diff(a, single) < 2e-5);   // the same update, up to the order of summation
  // The steps changed the model: the comparison is not between untouched copies.
  CHECK(std::abs(single[0] - single[1]) > 1e-6);
}

}  // namespace

TEST_CASE("two ranks take the update one trainer takes over the whole step (full weights)") {
  check_two_ranks_match_one("full");
}

TEST_CASE("two ranks take the update one trainer takes over the whole step (LoRA)") {
  check_two_ranks_match_one("lora");
}

TEST_CASE("the ranks meet over TCP as well as through a file") {
  check_two_ranks_match_one("full", true);
}

TEST_CASE("a rank that stops ends its peer with an error naming the failed sum") {
  Job job("dist_stop");
  const std::string store = "file:" + (job.dir / "store").string();
  pid_t r0 = start({kModel, (job.dir / "r0.txt").string(), "0", "2", store, "full"}, job.dir / "r0.err");
  pid_t r1 = start({kModel, (job.dir / "r1.txt").string(), "1", "2", store, "full", "stop"}, job.dir / "r1.err");
  int rc1 = finish(r1), rc0 = finish(r0);
  std::string err = slurp(job.dir / "r0.err");
  INFO(err);
  CHECK(rc0 == 1);
  if (dist::available()) {
    CHECK(rc1 == 3);
    CHECK(err.find("dist: rank 0 of 2") != std::string::npos);
    CHECK(err.find("did another rank stop?") != std::string::npos);
  } else {
    CHECK(err.find("built without gloo") != std::string::npos);
  }
}

// One GPU is enough to run NCCL's path: a group of one still sums (and broadcasts) the
// gradients through an NCCL communicator on the device. Where this build has no NCCL the
// backend is refused, and says why; where it has NCCL but no GPU, the rank fails as the
// single trainer does.
TEST_CASE("a GPU rank in an NCCL group of one takes the single trainer's update") {
  if (!dist::nccl_available()) {
    CHECK_THROWS_WITH(dist::Group::join({0, 1, "", 5, "nccl"}), Catch::Contains("built without NCCL"));
    CHECK_THROWS_WITH(dist::Group::join({0, 2, "file:/tmp/x", 5, "nccl"}), Catch::Contains("built without NCCL"));
    return;
  }
  Job job("dist_nccl");
  pid_t one = start({kModel, (job.dir / "one.txt").string(), "0", "0", "-", "full", "cuda"}, job.dir / "one.err");
  const int rc_one = finish(one);
  pid_t r0 = start({kModel, (job.dir / "r0.txt").string(), "0", "1", "-", "full", "cuda", "nccl"}, job.dir / "r0.err");
  const int rc0 = finish(r0);
  INFO(slurp(job.dir / "one.err") << slurp(job.dir / "r0.err"));
  if (rc_one != 0) {  // no GPU here: the NCCL rank cannot load its policy either
    CHECK(slurp(job.dir / "one.err").find("CUDA") != std::string::npos);
    CHECK(rc0 == rc_one);
    return;
  }
  REQUIRE(rc0 == 0);
  auto single = numbers(job.dir / "one.txt"), r = numbers(job.dir / "r0.txt");
  REQUIRE(single.size() == 38);
  CHECK(max_diff(r, single) < 1e-6);
  CHECK(std::abs(single[0] - single[1]) > 1e-6);
}

TEST_CASE("a malformed rendezvous is refused with what is wrong") {
  CHECK_THROWS_WITH(dist::Group::join({0, 2, "file:/tmp/x", 5, "mpi"}),
                    Catch::Contains("the backend 'mpi' is neither gloo nor nccl"));
  CHECK_THROWS_WITH(dist::Group::join({2, 2, "file:/tmp/x", 5}),
                    Catch::Contains("rank 2 is not one of 2 ranks"));
  CHECK_THROWS_WITH(dist::Group::join({0, 2, "/tmp/x", 5}),
                    Catch::Contains(dist::available() ? "neither file:PATH nor tcp:HOST:PORT"
                                                      : "built without gloo"));
  CHECK_THROWS_WITH(dist::Group::join({0, 2, "tcp:localhost:notaport", 5}),
                    Catch::Contains(dist::available() ? "is not tcp:HOST:PORT" : "built without gloo"));
  auto alone = dist::Group::join({0, 1, "", 5});
  CHECK(alone->size() == 1);
  CHECK(alone->rank() == 0);
  alone->barrier();
}
