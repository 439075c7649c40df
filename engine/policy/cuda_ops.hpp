// The model's CUDA kernels behind torch tensors. In a build without CUDA every function
// here declines (returns an undefined tensor), and the callers use plain ATen.
#pragma once

#include <torch/torch.h>

namespace policy {

// softmax(q k^T * scale + bias) v for one query per row: q [B, heads, 1, d], k and v
// [B, kv_heads, S, d] (rows of d contiguous; strided views of a cache are fine), bias
// [B, 1, 1, S] fp32 (additive, 0 or -inf) or undefined. Returns [B, 1, heads * d], or an
// undefined tensor when the kernel does not cover the inputs (layout, dtype, device).
// last_column ([1] int64 on the device), when given, limits the keys to columns up to it.
torch::Tensor fused_decode_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const torch::Tensor& bias,
                                     double scale, const torch::Tensor& last_column = {});

// RoPE on the query and key heads of qkv [B, 1, heads + 2 * kv_heads, d] (one token per
// row, contiguous, bf16), the rotated key and the value written into k_cache/v_cache
// [B, kv_heads, capacity, d] at column *slot (a [1] int64 device tensor) or, without a
// slot, at column `column`. cos/sin [B, 1, d] as TransformerImpl::rope makes them.
// Returns the rotated queries [B, heads, 1, d], or an undefined tensor when the kernel does
// not cover the inputs (nothing is written then).
torch::Tensor fused_rope_cache(const torch::Tensor& qkv, const torch::Tensor& cos,
                               const torch::Tensor& sin, torch::Tensor& k_cache,
                               torch::Tensor& v_cache, const torch::Tensor& slot,
                               int64_t column);

// RMSNorm of bf16 rows (transformers' roundings), or undefined when not covered.
torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// silu(gate) * up for gu = [gate, up] along the last dimension (bf16), or undefined.
torch::Tensor fused_swiglu(const torch::Tensor& gu);

// A training step's kernels (DecodeKernels::fused_training), each undefined when not
// covered: fused_swiglu's backward (gu as above, grad its output's gradient), and RoPE
// over x [B, T, heads, d] (contiguous, bf16) with cos/sin [B, T, d] as
// TransformerImpl::rope makes them, or with backward its transpose (x the gradient).
torch::Tensor fused_swiglu_backward(const torch::Tensor& gu, const torch::Tensor& grad);
torch::Tensor fused_rope_rows(const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, bool backward);

// One token per row from softmax(logits / temperature) (logits [rows, vocab], bf16 or
// fp32, on the GPU; temperature > 0) and its log-probability, drawn with the default CUDA
// generator: {tokens int64 [rows], logprobs fp32 [rows]}, or undefined tensors when not
// covered.
std::pair<torch::Tensor, torch::Tensor> fused_sample(const torch::Tensor& logits,
                                                     double temperature);

// Which of the model's own kernels run (all by default): the decode step's and, in
// fused_training, a training step's; a benchmark turns them off to measure what each saves
// in the same process.
struct DecodeKernels {
  bool fused_elementwise = true;  // fused_rope_cache, fused_rms_norm, fused_swiglu
  bool fused_training = true;     // fused_swiglu (and its backward), fused_rope_rows in training
  bool fused_sampler = true;      // fused_sample
  bool pipelined_sampling = true;  // sampling inside the step's graph, one step ahead
  bool tensor_core_attention = true;  // fused_decode_attention on the tensor cores
  bool cpu_attention = true;          // a CPU decode step's attention by cpu_decode_attention
  int attention_tiles_per_block = 0;  // its 64-key tiles a block walks (0: the launch's choice)
};
DecodeKernels& decode_kernels();

}  // namespace policy
