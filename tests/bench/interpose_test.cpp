// A library ahead of libstdc++ that exports std::filesystem::remove_all (as PyTorch's
// libtorch.so does, with a copy that jumps to address 0 on a non-empty directory) must
// not be reached by the engine's own removals: the evaluation process's clean-up, the
// run store's checkpoints.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "files/files.hpp"
#include "store/store.hpp"

extern int interposed_remove_all_calls;

namespace fs = std::filesystem;

static void fill(const fs::path& dir) {
  fs::create_directories(dir / "a" / "b");
  std::ofstream(dir / "kernel.c") << "x";
  std::ofstream(dir / "a" / "b" / "kernel.so") << "y";
  fs::create_symlink("/etc", dir / "a" / "link");  // removed, never followed
}

TEST_CASE("the interposed remove_all is what this program's std::filesystem calls reach") {
  fs::path dir = fs::temp_directory_path() / ("interpose-" + std::to_string(getpid()));
  fill(dir);
  // Which copy the program's calls reach: where the function's address lies. With
  // libstdc++ as a shared library, symbol lookup finds the stand-in first (the mechanism
  // of the crash); a toolchain that links libstdc++'s filesystem part into the program
  // binds its calls to that copy instead, and only shared libraries' calls could be
  // diverted.
  using RemoveAll = std::uintmax_t (*)(const fs::path&, std::error_code&);
  RemoveAll reached = &fs::remove_all;
  Dl_info where{};
  REQUIRE(dladdr(reinterpret_cast<void*>(reached), &where) != 0);
  const std::string object = where.dli_fname ? where.dli_fname : "";
  INFO("remove_all reached in " << object);
  const bool interposed = object.find("interpose_remove_all") != std::string::npos;
  int before = interposed_remove_all_calls;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (interposed) {
    CHECK(interposed_remove_all_calls == before + 1);
    CHECK(fs::exists(dir / "a" / "b" / "kernel.so"));  // the stand-in removed nothing
  } else {
    CHECK(object.find("libstdc++") == std::string::npos);  // the program's own copy
    CHECK(interposed_remove_all_calls == before);
    CHECK_FALSE(fs::exists(dir));
    fill(dir);
  }
  CHECK(files::remove_tree(dir.string()));
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("files::remove_tree removes nested trees without std::filesystem") {
  fs::path dir = fs::temp_directory_path() / ("interpose-tree-" + std::to_string(getpid()));
  fill(dir);
  int before = interposed_remove_all_calls;
  std::string err;
  CHECK(files::remove_tree(dir.string(), &err));
  CHECK(err.empty());
  CHECK_FALSE(fs::exists(dir));
  CHECK(fs::exists("/etc/passwd"));
  CHECK(files::remove_tree(dir.string()));  // nothing there: still true
  CHECK(interposed_remove_all_calls == before);
}

TEST_CASE("owned directories are swept only once their owner is gone") {
  fs::path base = fs::temp_directory_path() / ("interpose-owned-" + std::to_string(getpid()));
  fs::create_directories(base);
  files::OwnedDir live(base.string(), "engine-zygote");
  std::ofstream(live.path() + "/kernel.c") << "x";
  // A dead owner's tree: its lock file exists but nobody holds it.
  fs::create_directories(base / "engine-zygote-dead00" / "kernel-1");
  std::ofstream(base / "engine-zygote-dead00" / ".owner");
  std::ofstream(base / "engine-zygote-dead00" / "kernel-1" / "kernel.so") << "y";
  int before = interposed_remove_all_calls;
  CHECK(files::sweep_orphans(base.string(), "engine-zygote") == 1);
  CHECK_FALSE(fs::exists(base / "engine-zygote-dead00"));
  CHECK(fs::exists(live.path() + "/kernel.c"));
  // A child process inherits the lock's descriptor; its exit does not free the lock.
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  CHECK(files::sweep_orphans(base.string(), "engine-zygote") == 0);
  std::string path = live.path();
  live.remove();
  CHECK_FALSE(fs::exists(path));
  CHECK(interposed_remove_all_calls == before);
  CHECK(files::remove_tree(base.string()));
}

TEST_CASE("the run store replaces a committed checkpoint without std::filesystem::remove_all") {
  fs::path dir = fs::temp_directory_path() / ("interpose-run-" + std::to_string(getpid()));
  files::remove_tree(dir.string());
  int before = interposed_remove_all_calls;
  {
    auto run = store::Run::open(dir);
    for (const char* content : {"first", "second"}) {
      fs::path staging = run->begin_checkpoint("update-1");
      std::ofstream(staging / "weights.bin") << content;
      fs::create_directories(staging / "optimizer");
      std::ofstream(staging / "optimizer" / "state.bin") << content;
      run->commit_checkpoint("update-1");
    }
    std::ifstream f(run->checkpoint_path("update-1") / "weights.bin");
    std::string got;
    f >> got;
    CHECK(got == "second");
  }
  CHECK(interposed_remove_all_calls == before);
  CHECK(files::remove_tree(dir.string()));
}
