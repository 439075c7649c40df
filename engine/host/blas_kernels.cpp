#include "host/blas_kernels.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace host {

std::string openblas_core() {
  using CoreName = char* (*)();
  auto corename = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = corename ? corename() : nullptr;
  return name ? name : "";
}

// OpenBLAS's x86-64 kinds without AVX2 kernels, lower case.
static bool before_avx2(std::string core) {
  std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* old : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "sandybridge",
                          "katmai", "coppermine", "northwood", "banias", "athlon", "opteron", "opteron_sse3",
                          "barcelona", "bobcat", "bulldozer", "piledriver", "steamroller", "excavator"})
    if (core == old) return true;
  return false;
}

void choose_openblas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  std::string core = openblas_core();
  if (core.empty() || !before_avx2(core)) return;
  __builtin_cpu_init();
  const char* want = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    want = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    want = "Haswell";
  if (!want) return;
  setenv("OPENBLAS_CORETYPE", want, 1);
  setenv("ENGINE_OPENBLAS_READ_AS", core.c_str(), 1);  // what it chose alone, for host_check
  execv("/proc/self/exe", argv);
  // exec failed: carry on with the kernels OpenBLAS chose
}

}  // namespace host
