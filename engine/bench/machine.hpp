// The machine kernels run on: cores, ISA extensions, the compiler target that matches
// it, and a theoretical FP64 peak (the paper reports GFLOPS as a ratio of it).
#pragma once

#include <string>
#include <vector>

namespace bench {

struct Machine {
  int cores = 1;                     // CPUs this process may run on
  std::string model;                 // "AMD EPYC ..."
  std::vector<std::string> isa;      // what kernels may use: sse4_2, avx, avx2, fma, avx512f, ...
  std::string simd;                  // the widest FP64 vector ISA of those: avx512, avx2, avx, sse2
  std::string cpu;                   // the compiler's name for it, e.g. "znver3"
  std::string target = "native";     // "native", or the target ENGINE_TARGET forces
  std::vector<std::string> march;    // explicit target flags for both back ends
  double ghz = 0;                    // nominal clock the peak assumes
  int vector_doubles = 1;            // doubles per widest FP64 vector register
  int fma_units = 2;                 // FMA pipes per core (assumed, see formula)
  double peak_gflops = 0;
  std::string peak_formula;          // the formula with its numbers
  // The fastest any kernel can move bytes: every core loading two and storing one of its
  // widest vectors a cycle (the L1 data cache's ports), far above any memory's bandwidth.
  double peak_gbps = 0;
  std::string peak_gbps_formula;
};

// Detected once per process (runs the compiler driver once), then cached. The environment
// variable ENGINE_TARGET=NAME (a gcc -march name the CPU can run, e.g. x86-64-v3) makes
// kernels target NAME instead of the host: the ISA, the flags and the peak follow it, so
// a machine with AVX-512 can behave as one without. Throws when NAME is unknown or asks
// for an extension this CPU lacks.
const Machine& machine();

// Turns a user's `march` option into flags: "" or "native" -> the detected host flags;
// "-m..." flags separated by spaces -> as given; a CPU name -> {"-march=NAME"}.
std::vector<std::string> resolve_march(const std::string& march);

std::string join_flags(const std::vector<std::string>& flags);

}  // namespace bench
