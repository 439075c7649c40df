// Small fused kernels of a decode step: each replaces a chain of elementwise torch
// operations that read and write the same few megabytes several times, and whose
// per-kernel cost (a few microseconds each, hundreds a step) adds up at batch 64.
// bf16 only; no torch here: the caller passes raw pointers (cuda_ops.hpp wraps them).
#pragma once

#include <cstdint>

namespace policy {

// RoPE on the query and key heads of a fused q/k/v projection, and the step's key and
// value written into the cache at one column.
//   qkv  [rows, heads + 2 * kv_heads, d] contiguous (one token per row)
//   cos, sin [rows, d] contiguous, sin with rotate_half's sign folded in ([-sin, sin]):
//        x' = x * cos + [x2, x1] * sin
//   q_out [rows, heads, d] contiguous
//   k_cache, v_cache [rows, kv_heads, capacity, d] at row * c_sb + head * c_sh + col * c_ss
//   column: *slot when slot is set (a device int64, so a recorded graph can advance it),
//        else column.
struct RopeCacheArgs {
  const void* qkv = nullptr;
  const void* cos = nullptr;
  const void* sin = nullptr;
  void* q_out = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  int64_t c_sb = 0, c_sh = 0, c_ss = 0;
  const int64_t* slot = nullptr;
  int64_t column = 0;
  int rows = 0, heads = 0, kv_heads = 0, head_dim = 0;
};
void rope_cache_launch(const RopeCacheArgs& a, void* stream);

// out = w * bf16(x * rsqrt(mean(x^2) + eps)), in fp32 with the roundings of the eager
// form, over rows of dim contiguous values.
void rms_norm_launch(const void* x, const void* w, void* out, int64_t rows, int dim, float eps,
                     void* stream);

// out[r, i] = bf16(silu(gu[r, i])) * gu[r, inner + i] for gu [rows, 2 * inner] contiguous.
void swiglu_launch(const void* gu, void* out, int64_t rows, int64_t inner, void* stream);

// One token per row drawn from softmax(logits / temperature), and its log-probability:
// the Gumbel-max race (argmax of logit / T - log E, E ~ Exp(1) from Philox), which is an
// exact draw, in one pass over each row that also takes the row's log-sum-exp. A row is
// cut into chunks when there are too few rows to fill the GPU; a second kernel merges them.
//   logits [rows, vocab], bf16 or fp32, rows row_stride elements apart
//   Philox: seed and offset as values, or (inside a CUDA graph capture) read from
//        seed_ptr / offset_ptr plus offset_add, as torch's CUDA generator hands them out.
struct SampleArgs {
  const void* logits = nullptr;
  bool logits_fp32 = false;
  int64_t row_stride = 0;
  int rows = 0, vocab = 0;
  float inv_temperature = 1.0f;
  int64_t* tokens = nullptr;
  float* logprobs = nullptr;
  uint64_t seed = 0, offset = 0;
  const int64_t* seed_ptr = nullptr;
  const int64_t* offset_ptr = nullptr;
  uint32_t offset_add = 0;
  void* scratch = nullptr;  // sample_scratch_bytes(rows, vocab)
};
// A row without a finite logit draws token 0 with a NaN log-probability.
// Random 32-bit values each thread draws: the generator's offset must advance by this.
uint64_t sample_offset_increment(int rows, int vocab);
int64_t sample_scratch_bytes(int rows, int vocab);
void sample_launch(const SampleArgs& a, void* stream);

}  // namespace policy
