// Attention of one new query per sequence over a key/value cache (a decode step), for
// grouped-query attention: the G = heads / kv_heads query heads of a key/value head are
// processed together, so each key and value row is read once from memory. With few rows
// the cache span is cut into chunks that run in parallel (split-K, "flash decoding") and
// are merged by a second kernel; with enough rows to fill the GPU, one block walks a row's
// whole span. On GPUs with bf16 tensor cores (compute capability 8 on) the scores and the
// weighted values are computed on them, the weights rounded to bf16 as flash attention
// does; elsewhere, or when asked, in fp32 on the SIMT cores. No torch here: the caller
// passes raw pointers and strides.
#pragma once

#include <cstdint>

namespace policy {

struct DecodeAttentionArgs {
  const void* q = nullptr;  // bf16 q[b, h, d] at b * q_sb + h * q_sh + d
  int64_t q_sb = 0, q_sh = 0;
  const void* k = nullptr;  // bf16 k[b, hk, s, d] at b * kv_sb + hk * kv_sh + s * kv_ss + d
  const void* v = nullptr;  // the same layout as k
  int64_t kv_sb = 0, kv_sh = 0, kv_ss = 0;
  const float* bias = nullptr;  // optional additive mask bias[b, s] at b * bias_sb + s
  int64_t bias_sb = 0;
  void* out = nullptr;          // bf16 out[b, h, d], contiguous
  float* partial = nullptr;     // workspace of partial_floats() floats
  int batch = 0, heads = 0, kv_heads = 0, head_dim = 0, span = 0;
  // When set, keys past column *last_column are skipped (read on the device, so a graph
  // recorded for a span of several steps costs each step only the keys it has).
  const int64_t* last_column = nullptr;
  float scale = 1.0f;
  bool tensor_cores = true;  // false: the SIMT kernel even where tensor cores are
  int tiles_per_block = 0;   // tensor cores: 64-key tiles a block walks (0: the launch's choice)
};

// Whether the kernels cover these shapes (head_dim 64 or 128, up to 8 query heads per
// key/value head).
bool decode_attention_supported(int heads, int kv_heads, int head_dim);
// Floats of workspace the launch of these arguments needs.
int64_t decode_attention_partial_floats(const DecodeAttentionArgs& a);
// Enqueues the kernels on the given cudaStream_t; throws std::runtime_error on a launch error.
void decode_attention_launch(const DecodeAttentionArgs& a, void* stream);

}  // namespace policy
