// kernelc benchmark: for every kernel of the shared examples and the corpus, at O0, O1
// and O3,
//   - compile latency: kernelc (in memory, libgccjit) against gcc as a subprocess into a
//     shared object (what the "gcc" back end does), both with the same target flags;
//   - GFLOPS of the kernelc-compiled kernel against the gcc-compiled one (O1 and O3);
//   - the fallback rate: kernels kernelc reports unsupported.
//
//   kernelc_bench [--size N] [--reps R] [--filter SUBSTRING] [--levels O0,O1,O3]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "harness.hpp"
#include "kernelc/kernelc.hpp"

namespace fs = std::filesystem;

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

static double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / v.size());
}

int main(int argc, char** argv) {
  int size = 256, reps = 5;
  std::string filter;
  std::vector<std::string> levels = {"O0", "O1", "O3"};
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a.c_str()); exit(2); }
      return argv[++i];
    };
    if (a == "--size") size = std::stoi(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--filter") filter = next();
    else if (a == "--levels") {
      levels.clear();
      std::string l = next();
      size_t p = 0;
      while (p <= l.size()) {
        size_t q = l.find(',', p);
        levels.push_back(l.substr(p, q == std::string::npos ? std::string::npos : q - p));
        if (q == std::string::npos) break;
        p = q + 1;
      }
    } else {
      fprintf(stderr, "usage: kernelc_bench [--size N] [--reps R] [--filter S] [--levels O0,O1,O3]\n");
      return 2;
    }
  }
  std::vector<std::string> march = kharness::host_march();
  std::vector<std::string> files;
  for (const char* dir : {KERNELC_LABELLED_KERNELS, KERNELC_CORPUS})
    for (auto& p : kharness::list_kernels(dir))
      if (filter.empty() || p.find(filter) != std::string::npos) files.push_back(p);
  std::string flags;
  for (auto& m : march) flags += m + " ";
  printf("kernelc benchmark: %zu kernels, target flags: %s, GFLOPS at about %d^3 (best of %d, measured alternately)\n", files.size(), flags.c_str(), size, reps);
  printf("%-28s %-3s %9s %9s %9s %7s %9s %9s %7s\n", "kernel", "opt", "fe_ms", "jit_ms", "gcc_ms", "ratio", "jit_GF", "gcc_GF", "GF_rat");
  std::map<std::string, std::vector<double>> lat_ratio, jit_ms, gcc_ms, fe_ms, gf_ratio;
  int compiled = 0, unsupported = 0;
  std::vector<std::string> outside;
  // Phase 1 compiles everything before any kernel runs, so libgomp's spinning worker
  // threads cannot slow the compiles; phase 2 runs them.
  struct Build {
    std::string name, opt;
    kharness::Shape shape;
    bool runnable;
    kernelc::Result jit;
    kharness::GccBuild gcc;
  };
  std::vector<Build> builds;
  for (auto& path : files) {
    std::string src = kharness::read_file(path);
    kharness::Header h = kharness::read_header(src);
    if (h.expect == "compile_error" || h.expect == "library_violation") continue;
    std::string name = fs::path(path).stem().string();
    kharness::Shape s = h.sizes.front();
    int scale = std::max(1, size / std::max({s.M, s.N, s.K}));
    s = {s.M * scale, s.N * scale, s.K * scale};
    for (auto& opt : levels) {
      kernelc::Options o;
      o.opt = opt;
      o.march = march;
      Build b{name, opt, s, h.expect == "ok", kernelc::compile(src, o), kharness::gcc_compile(src, opt, march)};
      compiled++;
      if (b.jit.status == kernelc::Status::unsupported) unsupported++;
      if (b.jit.status == kernelc::Status::ok && b.gcc.ok) {
        fe_ms[opt].push_back(b.jit.frontend_ms);
        jit_ms[opt].push_back(b.jit.compile_ms);
        gcc_ms[opt].push_back(b.gcc.compile_ms);
        lat_ratio[opt].push_back(b.gcc.compile_ms / b.jit.compile_ms);
      }
      builds.push_back(std::move(b));
    }
  }
  for (auto& b : builds) {
    if (b.jit.status != kernelc::Status::ok || !b.gcc.ok) {
      printf("%-28s %-3s  kernelc: %s%s\n", b.name.c_str(), b.opt.c_str(), bench::to_string(b.jit.status), b.gcc.ok ? "" : " (gcc failed)");
      continue;
    }
    double gj = 0, gg = 0;
    if (b.runnable && b.opt != "O0") {
      auto [x, y] = kharness::gflops_pair(reinterpret_cast<kharness::Kernel>(b.jit.entry), b.gcc.entry, b.shape, reps);
      gj = x;
      gg = y;
      if (gj / gg < 0.95 || gj / gg > 1.05) {
        // outside 5%: measure again, longer, keeping each build's best (noise only
        // ever slows a run down)
        auto [x2, y2] = kharness::gflops_pair(reinterpret_cast<kharness::Kernel>(b.jit.entry), b.gcc.entry, b.shape, 3 * reps);
        gj = std::max(gj, x2);
        gg = std::max(gg, y2);
      }
      gf_ratio[b.opt].push_back(gj / gg);
      if (gj / gg < 0.95) outside.push_back(b.name + " -" + b.opt);
    }
    printf("%-28s %-3s %9.2f %9.1f %9.1f %7.2f", b.name.c_str(), b.opt.c_str(), b.jit.frontend_ms, b.jit.compile_ms, b.gcc.compile_ms,
           b.gcc.compile_ms / b.jit.compile_ms);
    if (gj > 0) printf(" %9.2f %9.2f %7.3f", gj, gg, gj / gg);
    printf("\n");
    fflush(stdout);
  }
  printf("\nsummary (medians over kernels; ratio = gcc subprocess time / kernelc time)\n");
  for (auto& opt : levels)
    printf("  -%s: front end %.2f ms, kernelc %.1f ms, gcc %.1f ms, latency ratio %.2fx; GFLOPS kernelc/gcc geomean %.3f (min %.3f) over %zu kernels\n",
           opt.c_str(), median(fe_ms[opt]), median(jit_ms[opt]), median(gcc_ms[opt]), median(lat_ratio[opt]), geomean(gf_ratio[opt]),
           gf_ratio[opt].empty() ? 0.0 : *std::min_element(gf_ratio[opt].begin(), gf_ratio[opt].end()), gf_ratio[opt].size());
  printf("  fallback rate (unsupported): %d of %d compiles (%.1f%%)\n", unsupported, compiled, compiled ? 100.0 * unsupported / compiled : 0.0);
  printf("  kernels below 0.95 of gcc's GFLOPS: %zu", outside.size());
  for (auto& o : outside) printf("%s %s", outside.front() == o ? ":" : ",", o.c_str());
  printf("\n");
  return 0;
}
