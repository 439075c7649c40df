// Fused kernels of a training step (see train_kernels.hpp).
#include "policy/train_kernels.hpp"

#include "policy/cuda_common.cuh"

namespace policy {
namespace {

// One column's gradients: dgate = bf16(bf16(g * up) * silu'(gate)), dup = bf16(g * bf16(silu)).
__device__ __forceinline__ void swiglu_grad_one(uint16_t gate_h, uint16_t up_h, uint16_t g_h, uint16_t& dgate,
                                                uint16_t& dup) {
  const float gate = bf16_to_float(gate_h), up = bf16_to_float(up_h), g = bf16_to_float(g_h);
  const float sig = 1.f / (1.f + __expf(-gate));
  const float silu = round_bf16(gate * sig);
  const float d_silu = round_bf16(g * up);
  dgate = float_to_bf16(d_silu * sig * (1.f + gate * (1.f - sig)));
  dup = float_to_bf16(g * silu);
}

// Thread per VEC consecutive columns of one row (VEC = 8: 16-byte loads of gate, up and
// the gradient, 16-byte stores of both halves of dgu).
template <int VEC>
__global__ void swiglu_backward_kernel(const uint16_t* __restrict__ gu, const uint16_t* __restrict__ grad,
                                       uint16_t* __restrict__ dgu, int64_t rows, int64_t inner) {
  const int64_t idx = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (idx >= rows * inner) return;
  const int64_t r = idx / inner, i = idx % inner;
  const int64_t gate_at = r * 2 * inner + i, up_at = gate_at + inner;
  if constexpr (VEC == 8) {
    const uint4 gv = *reinterpret_cast<const uint4*>(gu + gate_at);
    const uint4 uv = *reinterpret_cast<const uint4*>(gu + up_at);
    const uint4 dv = *reinterpret_cast<const uint4*>(grad + idx);
    const uint16_t* gs = reinterpret_cast<const uint16_t*>(&gv);
    const uint16_t* us = reinterpret_cast<const uint16_t*>(&uv);
    const uint16_t* ds = reinterpret_cast<const uint16_t*>(&dv);
    uint4 og, ou;
    uint16_t* ogs = reinterpret_cast<uint16_t*>(&og);
    uint16_t* ous = reinterpret_cast<uint16_t*>(&ou);
#pragma unroll
    for (int j = 0; j < 8; ++j) swiglu_grad_one(gs[j], us[j], ds[j], ogs[j], ous[j]);
    *reinterpret_cast<uint4*>(dgu + gate_at) = og;
    *reinterpret_cast<uint4*>(dgu + up_at) = ou;
  } else {
    swiglu_grad_one(gu[gate_at], gu[up_at], grad[idx], dgu[gate_at], dgu[up_at]);
  }
}

// Thread per pair (i, i + d/2) of one row: both outputs need both inputs.
__global__ void rope_rows_kernel(const uint16_t* __restrict__ x, const uint16_t* __restrict__ cos,
                                 const uint16_t* __restrict__ sin, uint16_t* __restrict__ out,
                                 int64_t rows, int heads, int d, bool backward) {
  const int half = d / 2;
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= rows * half) return;
  const int64_t r = idx / half;
  const int i = static_cast<int>(idx % half);
  const int64_t at = r * d, p = (r / heads) * d;
  const float a = bf16_to_float(x[at + i]), b = bf16_to_float(x[at + half + i]);
  const float c1 = bf16_to_float(cos[p + i]), c2 = bf16_to_float(cos[p + half + i]);
  const float s1 = bf16_to_float(sin[p + i]), s2 = bf16_to_float(sin[p + half + i]);
  if (!backward) {
    out[at + i] = float_to_bf16(round_bf16(a * c1) + b * s1);
    out[at + half + i] = float_to_bf16(round_bf16(b * c2) + a * s2);
  } else {
    // out_i = x_i c_i + x_swap(i) s_i, so dx_j = g_j c_j + g_swap(j) s_swap(j).
    out[at + i] = float_to_bf16(round_bf16(a * c1) + round_bf16(b * s2));
    out[at + half + i] = float_to_bf16(round_bf16(b * c2) + round_bf16(a * s1));
  }
}

}  // namespace

void swiglu_backward_launch(const void* gu, const void* grad, void* dgu, int64_t rows,
                            int64_t inner, void* stream) {
  const int64_t n = rows * inner;
  if (n <= 0) return;
  const int threads = 256;
  auto s = static_cast<cudaStream_t>(stream);
  auto g = static_cast<const uint16_t*>(gu);
  auto d = static_cast<const uint16_t*>(grad);
  auto o = static_cast<uint16_t*>(dgu);
  const bool wide = inner % 8 == 0 && reinterpret_cast<uintptr_t>(gu) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(grad) % 16 == 0 && reinterpret_cast<uintptr_t>(dgu) % 16 == 0;
  if (wide)
    swiglu_backward_kernel<8><<<static_cast<unsigned>((n / 8 + threads - 1) / threads), threads, 0, s>>>(
        g, d, o, rows, inner);
  else
    swiglu_backward_kernel<1><<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, s>>>(
        g, d, o, rows, inner);
  check_launch("swiglu_backward");
}

void rope_rows_launch(const void* x, const void* cos, const void* sin, void* out, int64_t rows,
                      int heads, int head_dim, bool backward, void* stream) {
  const int64_t n = rows * (head_dim / 2);
  if (n <= 0) return;
  const int threads = 256;
  rope_rows_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0,
                     static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(cos), static_cast<const uint16_t*>(sin),
      static_cast<uint16_t*>(out), rows, heads, head_dim, backward);
  check_launch("rope_rows");
}

}  // namespace policy
