// The model's CUDA kernels behind torch tensors. In a build without CUDA every function
// here declines (returns an undefined tensor), and the callers use plain ATen.
#pragma once

#include <torch/torch.h>

namespace policy {

// softmax(q k^T * scale + bias) v for one query per row: q [B, heads, 1, d], k and v
// [B, kv_heads, S, d] (rows of d contiguous; strided views of a cache are fine), bias
// [B, 1, 1, S] fp32 (additive, 0 or -inf) or undefined. Returns [B, 1, heads * d], or an
// undefined tensor when the kernel does not cover the inputs (layout, dtype, device).
torch::Tensor fused_decode_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const torch::Tensor& bias,
                                     double scale);

}  // namespace policy
