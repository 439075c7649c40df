#include "harness.hpp"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include "files/files.hpp"

namespace kharness {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> list_kernels(const std::string& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) throw std::runtime_error("kernel directory " + dir + " does not exist");
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".c") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Header read_header(const std::string& source) {
  Header h;
  size_t end = source.find("*/");
  std::string first = source.substr(0, end == std::string::npos ? 0 : end);
  std::smatch m;
  if (std::regex_search(first, m, std::regex("expect:\\s*([a-z_]+)"))) h.expect = m[1];
  if (std::regex_search(first, m, std::regex("techniques:\\s*([a-z_ ]+)"))) h.techniques = m[1];
  if (std::regex_search(first, m, std::regex("sizes:\\s*([0-9 ;]+)"))) {
    std::stringstream ss(m[1].str());
    std::string group;
    while (std::getline(ss, group, ';')) {
      std::stringstream g(group);
      Shape s{};
      if (g >> s.M >> s.N >> s.K) h.sizes.push_back(s);
    }
  }
  if (h.sizes.empty()) h.sizes = {{64, 64, 64}};
  return h;
}

std::vector<std::string> host_march() {
  // ENGINE_TARGET forces a target, as it does for the engine (bench::machine()): an
  // AVX-512 machine then behaves as one without.
  const char* forced = std::getenv("ENGINE_TARGET");
  if (forced && *forced && std::string(forced) != "native") return {std::string("-march=") + forced};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"-march=x86-64-v4"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"-march=x86-64-v3"};
  return {};
}

GccBuild gcc_compile(const std::string& source, const std::string& opt, const std::vector<std::string>& march, const std::string& entry) {
  // libgomp's worker threads outlive a kernel's shared object: keep libgomp loaded.
  static void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  (void)gomp;
  GccBuild b;
  auto t0 = Clock::now();
  char tmpl[] = "/tmp/kernelc-gcc-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  fs::path dir = tmpl;
  fs::path src = dir / "kernel.c", so = dir / "kernel.so", log = dir / "log";
  {
    std::ofstream o(src);
    o << source;
  }
  std::vector<std::string> args = {"gcc", "-shared", "-fPIC", "-fopenmp", "-" + opt};
  args.insert(args.end(), march.begin(), march.end());
  args.insert(args.end(), {"-o", so.string(), src.string(), "-lm"});
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp("gcc", argv.data());
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  b.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  b.diagnostics = fs::exists(log) ? read_file(log.string()) : "";
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      b.handle = std::shared_ptr<void>(h, [](void* p) { dlclose(p); });
      b.entry = reinterpret_cast<Kernel>(dlsym(h, entry.c_str()));
      b.ok = b.entry != nullptr;
    } else {
      b.diagnostics += dlerror();
    }
  }
  files::remove_tree(std::filesystem::path(dir).string());
  return b;
}

std::vector<double> run(Kernel k, Shape s, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> A((size_t)s.M * s.K), B((size_t)s.K * s.N), C((size_t)s.M * s.N);
  for (auto& x : A) x = u(rng);
  for (auto& x : B) x = u(rng);
  for (size_t i = 0; i < C.size(); i++) C[i] = (double)(i % 7) - 3.0;
  k(A.data(), B.data(), C.data(), s.M, s.N, s.K);
  return C;
}

std::string compare(const std::vector<double>& a, const std::vector<double>& b, double rel) {
  if (a.size() != b.size()) return "sizes differ";
  for (size_t i = 0; i < a.size(); i++) {
    double x = a[i], y = b[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    double scale = std::max(std::fabs(x), std::fabs(y));
    if (std::fabs(x - y) <= rel * scale || std::fabs(x - y) < 1e-300) continue;
    std::ostringstream o;
    o.precision(17);
    o << "element " << i << ": " << x << " vs " << y;
    return o.str();
  }
  return "";
}

double gflops(Kernel k, Shape s, int reps) {
  std::vector<double> A((size_t)s.M * s.K, 0.5), B((size_t)s.K * s.N, 0.25), C((size_t)s.M * s.N, 0.0);
  k(A.data(), B.data(), C.data(), s.M, s.N, s.K);
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    auto t0 = Clock::now();
    k(A.data(), B.data(), C.data(), s.M, s.N, s.K);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return 2.0 * s.M * s.N * s.K / best / 1e9;
}

}  // namespace kharness

namespace kharness {

std::pair<double, double> gflops_pair(Kernel a, Kernel b, Shape s, int reps) {
  std::vector<double> A((size_t)s.M * s.K, 0.5), B((size_t)s.K * s.N, 0.25), C((size_t)s.M * s.N, 0.0);
  a(A.data(), B.data(), C.data(), s.M, s.N, s.K);
  b(A.data(), B.data(), C.data(), s.M, s.N, s.K);
  double best[2] = {1e30, 1e30};
  for (int r = 0; r < reps; r++)
    for (int w = 0; w < 2; w++) {
      Kernel k = w ? b : a;
      auto t0 = Clock::now();
      k(A.data(), B.data(), C.data(), s.M, s.N, s.K);
      best[w] = std::min(best[w], std::chrono::duration<double>(Clock::now() - t0).count());
    }
  double flop = 2.0 * s.M * s.N * s.K;
  return {flop / best[0] / 1e9, flop / best[1] / 1e9};
}

}  // namespace kharness
