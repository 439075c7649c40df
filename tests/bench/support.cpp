#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#if defined(BENCH_TEST_KERNELC) && __has_include("kernelc/backend.hpp")
#include "bench/compiler.hpp"
#include "kernelc/backend.hpp"
// Before any test starts the zygote, so kernel children see it.
static const bool kernelc_registered = [] {
  bench::register_backend(std::make_unique<kernelc::GccJitBackend>());
  return true;
}();
#endif

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

std::string expected_status(const std::string& source) { return field(source, "expect"); }
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
