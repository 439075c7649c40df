// A CPU decode step's attention in one pass, without the BLAS: on two cores libtorch's
// batched products of one query against a few hundred keys are 2 x rows x kv_heads BLAS
// calls a layer, each packing its operands (on a 2-core Zen 3 the layer's attention took
// longer than its projections; docs/performance.md, "Sampling the default model").
#pragma once

#include <torch/torch.h>

namespace policy {

// softmax(q k^T * scale + bias) v for one query per row, on the CPU in fp32: q [B, heads,
// 1, d], k and v [B, kv_heads, S, d] (rows of d contiguous; strided views of a cache are
// fine), bias [B, 1, 1, S] fp32 or undefined (no mask). Query head h reads key/value head
// h / (heads / kv_heads). Returns [B, 1, heads * d], or an undefined tensor when it does
// not cover the inputs (device, dtype, layout, a gradient asked for).
torch::Tensor cpu_decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& bias, double scale);

namespace detail {
// The same, by the AVX2 and FMA code (only where the CPU has both) or the baseline x86-64
// code, whichever the CPU: the tests hold the two paths to each other.
bool cpu_attention_avx2();
torch::Tensor cpu_decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& bias, double scale, bool avx2);
}  // namespace detail

}  // namespace policy
