#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "compile/compiler.hpp"
#include "bench/machine.hpp"
#include "test_backends.hpp"
#ifdef BENCH_TEST_KERNELC
#include "kernelc/backend.hpp"
#endif

// The back ends' names, so that options accept them; the test's evaluation process
// (bench_test_sandbox) compiles with them.
static const bool backends_registered = [] {
#ifdef BENCH_TEST_KERNELC
  bench::register_backend(std::make_unique<kernelc::GccJitBackend>());
#endif
  bench_test::register_test_backends();
  setenv("ENGINE_SANDBOX", BENCH_TEST_SANDBOX, 1);
  return true;
}();

namespace fs = std::filesystem;

namespace bench_test {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

static std::string field(const std::string& source, const std::string& key) {
  std::string line = first_line(source);
  auto at = line.find(key + ":");
  if (at == std::string::npos) return "";
  std::string rest = line.substr(at + key.size() + 1);
  rest = rest.substr(rest.find_first_not_of(' '));
  for (const char* end : {" | ", " */"}) {
    auto e = rest.find(end);
    if (e != std::string::npos) rest = rest.substr(0, e);
  }
  return rest;
}

std::string expected_status(const std::string& source) {
  std::string want = field(source, "expect");
  // AVX-512 code cannot compile for a target without it, whatever else it does.
  if (source.find("_mm512_") != std::string::npos && bench::machine().simd != "avx512" &&
      (want == "ok" || want == "runtime_error" || want == "verification_error" || want == "timeout"))
    return "compile_error";
  return want;
}
std::string expected_message(const std::string& source) { return field(source, "message"); }

std::vector<std::string> kernel_files(const std::string& dir) {
  INFO("kernel directory " << dir);
  REQUIRE(fs::is_directory(dir));
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".c") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  return files;
}

std::vector<int> children_of(int pid) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat;
    std::getline(f, stat);
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) out.push_back(std::atoi(name.c_str()));
  }
  return out;
}

std::vector<std::string> engine_backends() {
  std::vector<std::string> out;
  for (const auto& name : bench::backend_names())
    if (name != "never" && name != "careless") out.push_back(name);
  return out;
}

void each_backend(const std::string& source, bench::EvalOptions opts,
                  const std::function<void(const bench::Result&)>& check, const std::string& label) {
  for (const auto& backend : engine_backends()) {
    opts.backend = backend;
    auto r = bench::evaluate(source, opts);
    INFO((label.empty() ? "" : label + " via ") << backend << ": " << r.status << ": " << r.message);
    check(r);
  }
}

std::string zygote_root(int pid) {
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string target = fs::read_symlink(it->path(), ec).string();
    const std::string lock = "/.owner";
    if (!ec && target.size() > lock.size() && target.compare(target.size() - lock.size(), lock.size(), lock) == 0)
      return target.substr(0, target.size() - lock.size());
  }
  return "";
}

std::vector<std::string> temp_entries(const std::string& prefix) {
  const char* t = std::getenv("TMPDIR");
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(t && *t ? t : "/tmp", ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().rfind(prefix, 0) == 0) out.push_back(it->path().string());
  return out;
}

}  // namespace bench_test
