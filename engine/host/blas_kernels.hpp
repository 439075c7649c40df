#pragma once
// Which kernels OpenBLAS runs. Debian 12's OpenBLAS (0.3.21) reads CPUs newer than it as
// its oldest x86-64 kind ("Prescott": SSE3), so on an Emerald Rapids Xeon the policy's
// matmuls and the OpenBLAS yardstick ran its SSE3 kernels, a training step 3x slower. It
// picks its kernels when it is loaded, before main, from OPENBLAS_CORETYPE if set.

#include <string>

namespace host {

// The kernels OpenBLAS chose ("SkylakeX", "Haswell", "Prescott", ...); "" without it.
std::string openblas_core();

// When OpenBLAS chose kernels older than AVX2 on a CPU with AVX2 and FMA (or AVX-512) and
// the user set no OPENBLAS_CORETYPE: the engine starts itself again with OPENBLAS_CORETYPE
// naming the kernels the CPU runs ("SkylakeX", "Haswell"), which every process it starts
// inherits. Otherwise returns and nothing changes.
void choose_openblas_kernels(char** argv);

}  // namespace host
