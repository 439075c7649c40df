// Shared by the kernelc tests and benchmark: the gcc oracle (the system compiler as a
// subprocess into a shared object), inputs, running and comparing matmul kernels.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kharness {

using Kernel = void (*)(double*, double*, double*, int, int, int);

struct GccBuild {
  bool ok = false;
  std::string diagnostics;
  Kernel entry = nullptr;
  double compile_ms = 0;
  std::shared_ptr<void> handle;  // dlopen handle
};

// gcc -shared -fPIC -fopenmp -O<opt> <march> kernel.c, in a private temporary directory.
GccBuild gcc_compile(const std::string& source, const std::string& opt, const std::vector<std::string>& march,
                     const std::string& entry = "matmul_optimized");

// Explicit target flags for this machine's CPU (libgccjit refuses -march=native), or
// -march=NAME when the environment sets ENGINE_TARGET=NAME (as the engine honours it).
std::vector<std::string> host_march();

struct Shape {
  int M, N, K;
};

// A kernel file's header: "/* expect: ok | techniques: ... | sizes: 64 64 64; 32 48 16 */"
struct Header {
  std::string expect = "ok";
  std::string techniques;
  std::vector<Shape> sizes;
};
Header read_header(const std::string& source);

std::string read_file(const std::string& path);
std::vector<std::string> list_kernels(const std::string& dir);  // *.c, sorted

// Runs k on deterministic inputs in [0, 1) (seeded), C pre-filled with a pattern.
std::vector<double> run(Kernel k, Shape s, unsigned seed);

// Exact, or within `rel` relative to the larger magnitude (and 1e-300 absolute).
// Returns "" when equal, else a description of the first difference.
std::string compare(const std::vector<double>& a, const std::vector<double>& b, double rel);

// GFLOPS of k at s (2*M*N*K flops), best of `reps` after one warm-up run.
double gflops(Kernel k, Shape s, int reps);

// GFLOPS of a and b measured alternately (a, b, a, b, ...), best of `reps` each, so a
// busy machine disturbs both alike.
std::pair<double, double> gflops_pair(Kernel a, Kernel b, Shape s, int reps);

}  // namespace kharness
