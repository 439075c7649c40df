// The REPL driven through a pseudo-terminal, as a person at a keyboard would.
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "files/files.hpp"

namespace {

class Terminal {
 public:
  explicit Terminal(const std::string& home) {
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      setenv("HOME", home.c_str(), 1);
      setenv("TERM", "xterm", 1);
      unsetenv("ENGINE_HISTORY");
      execl(ENGINE_EXE, ENGINE_EXE, static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Terminal() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(fd_);
  }

  void type(const std::string& keys) { REQUIRE(write(fd_, keys.data(), keys.size()) == (ssize_t)keys.size()); }

  // Reads until `text` appears in the output seen since the last call; false on timeout.
  bool expect(const std::string& text, double seconds = 10) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      size_t at = seen_.find(text, mark_);
      if (at != std::string::npos) {
        mark_ = at + text.size();
        return true;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) return false;
      seen_.append(buf, static_cast<size_t>(n));
    }
  }
  // Types keys, then reads until text appears: one exchange with the REPL.
  bool exchange(const std::string& keys, const std::string& text) {
    type(keys);
    return expect(text);
  }
  // Leaves with Ctrl-D, sent only at the prompt: typed while the terminal is still in cooked
  // mode (the REPL printing), the line discipline can swallow it, and the REPL waits on for
  // input. The exit status, or -1 as wait_exit gives it.
  int quit() {
    REQUIRE(expect("> "));
    type("\x04");
    return wait_exit();
  }
  const std::string& seen() const { return seen_; }
  // The exit status, or -1 if the engine has not exited within the time given.
  // Keeps reading the terminal meanwhile, so the engine never blocks on a full one.
  int wait_exit(double seconds = 30) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) > 0) {
        char buf[4096];
        ssize_t n = read(fd_, buf, sizeof buf);
        if (n > 0) seen_.append(buf, static_cast<size_t>(n));
      }
    }
    return -1;
  }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string seen_;
  size_t mark_ = 0;
};

std::string temp_home() {
  auto dir = std::filesystem::temp_directory_path() / ("repl_test_" + std::to_string(getpid()));
  files::remove_tree(std::filesystem::path(dir).string());
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

TEST_CASE("the REPL evaluates chunks and completes names and survives Ctrl-C", "[repl]") {
  std::string home = temp_home();
  Terminal t(home);
  REQUIRE(t.expect("> "));

  CHECK(t.exchange("6 * 7\n", "42"));
  CHECK(t.exchange("{a = {b = {1, 'x'}}, n = 2}\n", "{ a = { b = { 1, \"x\" } }, n = 2 }"));

  // An incomplete chunk asks for more with ">> ".
  CHECK(t.exchange("for i = 1, 2 do\n", ">> "));
  t.type("print('row', i * 10)\n");
  CHECK(t.exchange("end\n", "row\t10"));
  CHECK(t.expect("row\t20"));

  // Tab completes a module's field; the completed call then runs.
  CHECK(t.exchange("json.enc\t", "json.encode"));
  CHECK(t.exchange("({1, 2})\n", "\"[1,2]\""));

  // Ctrl-C stops a running chunk; the session goes on. On a loaded machine the chunk may
  // not have started when the first Ctrl-C arrives (it then only clears the prompt), so
  // press it again until the loop reports the interruption.
  t.type("while true do end\n");
  bool interrupted = false;
  for (int i = 0; i < 20 && !interrupted; ++i) {
    usleep(200 * 1000);
    t.type("\x03");
    interrupted = t.expect("interrupted!", 3);  // a second Ctrl-C inside the chunk would kill it
  }
  REQUIRE(interrupted);
  CHECK(t.exchange("print('still' .. ' alive')\n", "still alive"));

  // Ctrl-C at a continuation prompt drops the pending chunk.
  CHECK(t.exchange("if true then\n", ">> "));
  t.type("\x03");
  CHECK(t.exchange("print('fresh')\n", "fresh"));

  // An error shows a traceback and keeps the session.
  CHECK(t.exchange("error('bad thing')\n", "bad thing"));
  CHECK(t.expect("stack traceback"));

  int status = t.quit();  // Ctrl-D leaves
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  std::ifstream hist(home + "/.engine_history");
  std::stringstream ss;
  ss << hist.rdbuf();
  CHECK_THAT(ss.str(), Catch::Contains("6 * 7"));
  CHECK_THAT(ss.str(), Catch::Contains("for i = 1, 2 do"));
  files::remove_tree(std::filesystem::path(home).string());
}

TEST_CASE("the REPL remembers history across sessions", "[repl]") {
  std::string home = temp_home();
  {
    Terminal t(home);
    REQUIRE(t.expect("> "));
    t.type("remembered = 123\n");
    REQUIRE(t.quit() != -1);
  }
  Terminal t(home);
  REQUIRE(t.expect("> "));
  CHECK(t.exchange("\x1b[A", "remembered = 123"));  // up arrow recalls the last line
  t.type("\n");
  CHECK(t.exchange("remembered + 1\n", "124"));
  files::remove_tree(std::filesystem::path(home).string());
}
