// Fused elementwise kernels of a decode step (see decode_kernels.hpp).
#include "policy/decode_kernels.hpp"

#include <curand_kernel.h>

#include <climits>

#include "policy/cuda_common.cuh"

namespace policy {
namespace {

// VEC values of a bf16 row as floats: one 16-byte load when VEC is 8.
template <int VEC>
__device__ __forceinline__ void load_bf16(const uint16_t* p, float (&f)[VEC]) {
  if constexpr (VEC == 8) {
    bf16x8_to_float(*reinterpret_cast<const uint4*>(p), f);
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) f[j] = bf16_to_float(p[j]);
  }
}

template <int VEC>
__device__ __forceinline__ void store_bf16(uint16_t* p, const uint16_t (&h)[VEC]) {
  if constexpr (VEC == 8) {
    uint4 u;
    u.x = h[0] | static_cast<uint32_t>(h[1]) << 16;
    u.y = h[2] | static_cast<uint32_t>(h[3]) << 16;
    u.z = h[4] | static_cast<uint32_t>(h[5]) << 16;
    u.w = h[6] | static_cast<uint32_t>(h[7]) << 16;
    *reinterpret_cast<uint4*>(p) = u;
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) p[j] = h[j];
  }
}

// Thread (row, head, i < d/2 in steps of VEC): the pairs (i + j, i + j + d/2), j < VEC, of
// one head (VEC = 8: 16-byte loads and stores; one value a load left the kernel bound by
// load latency). Query and key heads are rotated, value heads copied; keys and values go
// to the cache column.
template <int VEC>
__global__ void rope_cache_kernel(RopeCacheArgs a) {
  const int half = a.head_dim / 2, per_head = half / VEC;
  const int all_heads = a.heads + 2 * a.kv_heads;
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= all_heads * per_head) return;
  const int64_t row = blockIdx.y;
  const int head = idx / per_head, i = idx % per_head * VEC;
  const uint16_t* x = static_cast<const uint16_t*>(a.qkv) + (row * all_heads + head) * a.head_dim;
  float x1[VEC], x2[VEC];
  load_bf16<VEC>(x + i, x1);
  load_bf16<VEC>(x + i + half, x2);
  uint16_t y1[VEC], y2[VEC];
  if (head < a.heads + a.kv_heads) {
    const uint16_t* cp = static_cast<const uint16_t*>(a.cos) + row * a.head_dim;
    const uint16_t* sp = static_cast<const uint16_t*>(a.sin) + row * a.head_dim;
    float c1[VEC], c2[VEC], s1[VEC], s2[VEC];
    load_bf16<VEC>(cp + i, c1);
    load_bf16<VEC>(cp + i + half, c2);
    load_bf16<VEC>(sp + i, s1);
    load_bf16<VEC>(sp + i + half, s2);
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      // The eager form rounds x * cos to bf16 before adding the rotated half.
      y1[j] = float_to_bf16(fmaf(x2[j], s1[j], round_bf16(x1[j] * c1[j])));
      y2[j] = float_to_bf16(fmaf(x1[j], s2[j], round_bf16(x2[j] * c2[j])));
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      y1[j] = float_to_bf16(x1[j]);  // exact: the values are bf16
      y2[j] = float_to_bf16(x2[j]);
    }
  }
  uint16_t* dst;
  if (head < a.heads) {
    dst = static_cast<uint16_t*>(a.q_out) + (row * a.heads + head) * a.head_dim;
  } else {
    const bool is_key = head < a.heads + a.kv_heads;
    const int hk = head - a.heads - (is_key ? 0 : a.kv_heads);
    const int64_t col = a.slot ? *a.slot : a.column;
    dst = static_cast<uint16_t*>(is_key ? a.k_cache : a.v_cache) + row * a.c_sb + hk * a.c_sh +
          col * a.c_ss;
  }
  store_bf16<VEC>(dst + i, y1);
  store_bf16<VEC>(dst + i + half, y2);
}

constexpr int kNormThreads = 256;

__device__ float block_sum(float v) {
  __shared__ float warp_sums[kNormThreads / 32];
  for (int off = 16; off >= 1; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kNormThreads / 32; ++w) total += warp_sums[w];
  return total;
}

// Block per row; the row is read twice (the second time from cache).
__global__ void __launch_bounds__(kNormThreads)
    rms_norm_kernel(const uint16_t* __restrict__ x, const uint16_t* __restrict__ w,
                    uint16_t* __restrict__ out, int dim, float eps) {
  const uint16_t* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  uint16_t* outr = out + static_cast<int64_t>(blockIdx.x) * dim;
  float ss = 0.f;
  for (int i = threadIdx.x; i < dim; i += kNormThreads) {
    const float v = bf16_to_float(xr[i]);
    ss = fmaf(v, v, ss);
  }
  const float r = rsqrtf(block_sum(ss) / dim + eps);
  for (int i = threadIdx.x; i < dim; i += kNormThreads)
    outr[i] = float_to_bf16(bf16_to_float(w[i]) * round_bf16(bf16_to_float(xr[i]) * r));
}

// Rows up to kNormThreads * 8 * kNormVectors values a block holds in registers.
constexpr int kNormVectors = 4;

// Block per row, 8 values a 16-byte load, each read once and kept in registers (one
// value a load left a block waiting on load latency: at batch 64 there are only 64 rows).
__global__ void __launch_bounds__(kNormThreads)
    rms_norm_vec_kernel(const uint16_t* __restrict__ x, const uint16_t* __restrict__ w,
                        uint16_t* __restrict__ out, int dim, float eps) {
  const uint16_t* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  uint16_t* outr = out + static_cast<int64_t>(blockIdx.x) * dim;
  float v[kNormVectors][8];
  float ss = 0.f;
#pragma unroll
  for (int k = 0; k < kNormVectors; ++k) {
    const int i = (k * kNormThreads + threadIdx.x) * 8;
    if (i < dim) {
      load_bf16<8>(xr + i, v[k]);
#pragma unroll
      for (int j = 0; j < 8; ++j) ss = fmaf(v[k][j], v[k][j], ss);
    }
  }
  const float r = rsqrtf(block_sum(ss) / dim + eps);
#pragma unroll
  for (int k = 0; k < kNormVectors; ++k) {
    const int i = (k * kNormThreads + threadIdx.x) * 8;
    if (i < dim) {
      float wf[8];
      load_bf16<8>(w + i, wf);
      uint16_t o[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) o[j] = float_to_bf16(wf[j] * round_bf16(v[k][j] * r));
      store_bf16<8>(outr + i, o);
    }
  }
}

__device__ __forceinline__ uint16_t swiglu_one(uint16_t gate, uint16_t up) {
  const float g = bf16_to_float(gate);
  return float_to_bf16(round_bf16(g / (1.f + __expf(-g))) * bf16_to_float(up));
}

// Thread per VEC consecutive outputs (VEC = 8: one 16-byte load of gate and of up).
template <int VEC>
__global__ void swiglu_kernel(const uint16_t* __restrict__ gu, uint16_t* __restrict__ out,
                              int64_t rows, int64_t inner) {
  const int64_t idx = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (idx >= rows * inner) return;
  const int64_t r = idx / inner, i = idx % inner;
  const uint16_t* g = gu + r * 2 * inner + i;
  const uint16_t* u = g + inner;
  if constexpr (VEC == 8) {
    const uint4 gv = *reinterpret_cast<const uint4*>(g), uv = *reinterpret_cast<const uint4*>(u);
    const uint16_t* gs = reinterpret_cast<const uint16_t*>(&gv);
    const uint16_t* us = reinterpret_cast<const uint16_t*>(&uv);
    uint4 ov;
    uint16_t* os = reinterpret_cast<uint16_t*>(&ov);
#pragma unroll
    for (int j = 0; j < 8; ++j) os[j] = swiglu_one(gs[j], us[j]);
    *reinterpret_cast<uint4*>(out + idx) = ov;
  } else {
    out[idx] = swiglu_one(*g, *u);
  }
}

constexpr int kSampleThreads = 1024;

// A row's running state: log-sum-exp (max m, sum s of exp(x - m)) and the race's leader.
struct RowState {
  float m, s, key, x;
  int index;
};

__device__ __forceinline__ RowState merge(RowState a, RowState b) {
  RowState r;
  r.m = fmaxf(a.m, b.m);
  r.s = r.m == -INFINITY ? 0.f : a.s * __expf(a.m - r.m) + b.s * __expf(b.m - r.m);
  const bool take_b = b.key > a.key || (b.key == a.key && b.index < a.index);
  r.key = take_b ? b.key : a.key;
  r.x = take_b ? b.x : a.x;
  r.index = take_b ? b.index : a.index;
  return r;
}

__device__ __forceinline__ RowState shuffle(const RowState& v, int lane_mask) {
  RowState o;
  o.m = __shfl_xor_sync(0xffffffffu, v.m, lane_mask);
  o.s = __shfl_xor_sync(0xffffffffu, v.s, lane_mask);
  o.key = __shfl_xor_sync(0xffffffffu, v.key, lane_mask);
  o.x = __shfl_xor_sync(0xffffffffu, v.x, lane_mask);
  o.index = __shfl_xor_sync(0xffffffffu, v.index, lane_mask);
  return o;
}

// Elements a thread takes at once: one 16-byte load of bf16 logits. With one element a
// load, a warp had 64 bytes in flight and the kernel was bound by load latency (0.3 TB/s
// at batch 512 on an H100).
constexpr int kSampleVec = 8;

int sample_chunks(int rows, int vocab) {
  const int fill = (2 * sm_count() + rows - 1) / rows;  // two blocks per SM
  const int most = (vocab + kSampleVec * kSampleThreads - 1) / (kSampleVec * kSampleThreads);
  return max(1, min(min(fill, 16), most));
}

// Elements of a chunk: a multiple of kSampleVec, so that a chunk's loads stay aligned.
__host__ __device__ int sample_chunk_size(int vocab, int chunks) {
  const int per = (vocab + chunks - 1) / chunks;
  return (per + kSampleVec - 1) / kSampleVec * kSampleVec;
}

// Adds logit x (index i) with its uniform u to a thread's state: the log-sum-exp, and the
// race whose key is x - log(E), E = -log(u), u in (0, 1] (u = 1 stands for the smallest E
// the 24-bit u resolves). Only a u above exp(-exp(x - the leader's key)) can beat the
// leader, so the two logs are taken only then.
__device__ __forceinline__ void add_logit(RowState& st, float x, float u, int i) {
  if (x > st.m) {
    st.s = st.s * __expf(st.m - x) + 1.f;
    st.m = x;
  } else {
    st.s += __expf(x - st.m);
  }
  if (u > __expf(-__expf(x - st.key))) {
    const float e = u >= 1.f ? 2.98e-8f : -logf(u);
    const float key = x - logf(e);
    if (key > st.key) st.key = key, st.x = x, st.index = i;
  }
}

// Block (row, chunk): the chunk's elements, kSampleVec at a time a thread, its running
// state into scratch.
__global__ void __launch_bounds__(kSampleThreads) sample_kernel(SampleArgs a, int chunks) {
  const int row = blockIdx.x, chunk = blockIdx.y, tid = threadIdx.x;
  const uint64_t seed = a.seed_ptr ? static_cast<uint64_t>(*a.seed_ptr) : a.seed;
  const uint64_t offset =
      a.offset_ptr ? static_cast<uint64_t>(*a.offset_ptr) + a.offset_add : a.offset;
  curandStatePhilox4_32_10_t rng;
  curand_init(seed, (static_cast<uint64_t>(row) * chunks + chunk) * kSampleThreads + tid, offset,
              &rng);
  const int per_chunk = sample_chunk_size(a.vocab, chunks);
  const int begin = chunk * per_chunk, end = min(a.vocab, begin + per_chunk);
  const int64_t row_at = static_cast<int64_t>(row) * a.row_stride;
  const bool aligned = a.row_stride % kSampleVec == 0 &&
                       reinterpret_cast<uintptr_t>(a.logits) % 16 == 0;
  RowState st{-INFINITY, 0.f, -INFINITY, -INFINITY, INT_MAX};
  for (int i0 = begin + tid * kSampleVec; i0 < end; i0 += kSampleThreads * kSampleVec) {
    float x[kSampleVec];
    if (aligned && i0 + kSampleVec <= end) {
      if (a.logits_fp32) {
        const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(a.logits) + row_at + i0);
        const float4 lo = p[0], hi = p[1];
        x[0] = lo.x, x[1] = lo.y, x[2] = lo.z, x[3] = lo.w, x[4] = hi.x, x[5] = hi.y, x[6] = hi.z, x[7] = hi.w;
      } else {
        bf16x8_to_float(*reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(a.logits) + row_at + i0), x);
      }
    } else {
#pragma unroll
      for (int j = 0; j < kSampleVec; ++j) {
        const int64_t at = row_at + min(i0 + j, end - 1);
        x[j] = a.logits_fp32 ? static_cast<const float*>(a.logits)[at]
                             : bf16_to_float(static_cast<const uint16_t*>(a.logits)[at]);
      }
    }
    const float4 u0 = curand_uniform4(&rng), u1 = curand_uniform4(&rng);
    const float u[kSampleVec] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
#pragma unroll
    for (int j = 0; j < kSampleVec; ++j)
      if (i0 + j < end) add_logit(st, x[j] * a.inv_temperature, u[j], i0 + j);
  }
  for (int mask = 16; mask >= 1; mask >>= 1) st = merge(st, shuffle(st, mask));
  __shared__ RowState warps[kSampleThreads / 32];
  if (tid % 32 == 0) warps[tid / 32] = st;
  __syncthreads();
  if (tid == 0) {
    RowState r = warps[0];
    for (int w = 1; w < kSampleThreads / 32; ++w) r = merge(r, warps[w]);
    static_cast<RowState*>(a.scratch)[static_cast<int64_t>(row) * chunks + chunk] = r;
  }
}

// Thread per row: its chunks merged; the token and its log-probability.
__global__ void sample_merge_kernel(SampleArgs a, int chunks) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  const RowState* part = static_cast<const RowState*>(a.scratch) + static_cast<int64_t>(row) * chunks;
  RowState r = part[0];
  for (int c = 1; c < chunks; ++c) r = merge(r, part[c]);
  // A row of NaN logits (a diverged model) has no candidate: token 0 with a NaN
  // log-probability, as the unfused sampler gives, never an index past the vocabulary.
  const bool none = r.index == INT_MAX;
  a.tokens[row] = none ? 0 : r.index;
  a.logprobs[row] = none ? NAN : r.x - (r.m + logf(r.s));
}

}  // namespace

uint64_t sample_offset_increment(int rows, int vocab) {
  const int chunks = sample_chunks(rows, vocab);
  const uint64_t per_chunk = sample_chunk_size(vocab, chunks);
  const uint64_t rounds = (per_chunk + kSampleThreads * kSampleVec - 1) / (kSampleThreads * kSampleVec);
  return rounds * kSampleVec;  // a uniform an element, drawn four at a time
}

int64_t sample_scratch_bytes(int rows, int vocab) {
  return static_cast<int64_t>(rows) * sample_chunks(rows, vocab) * sizeof(RowState);
}

void sample_launch(const SampleArgs& a, void* stream) {
  if (a.rows <= 0) return;
  if (a.vocab <= 0) throw std::runtime_error("sample: empty vocabulary");
  if (!a.scratch) throw std::runtime_error("sample: no scratch memory");
  const int chunks = sample_chunks(a.rows, a.vocab);
  auto s = static_cast<cudaStream_t>(stream);
  sample_kernel<<<dim3(a.rows, chunks), kSampleThreads, 0, s>>>(a, chunks);
  sample_merge_kernel<<<(a.rows + 127) / 128, 128, 0, s>>>(a, chunks);
  check_launch("sample");
}

void rope_cache_launch(const RopeCacheArgs& a, void* stream) {
  if (a.rows <= 0 || a.head_dim % 2 != 0) throw std::runtime_error("rope/cache: bad shape");
  // 16-byte accesses need halves of a multiple of 8 values and every row, head and cache
  // column to start on 16 bytes.
  auto on16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec = a.head_dim % 16 == 0 && a.c_sb % 8 == 0 && a.c_sh % 8 == 0 && a.c_ss % 8 == 0 &&
                   on16(a.qkv) && on16(a.cos) && on16(a.sin) && on16(a.q_out) && on16(a.k_cache) &&
                   on16(a.v_cache);
  const int threads = 256;
  const int work = (a.heads + 2 * a.kv_heads) * (a.head_dim / 2) / (vec ? 8 : 1);
  const dim3 grid((work + threads - 1) / threads, a.rows);
  auto s = static_cast<cudaStream_t>(stream);
  if (vec) rope_cache_kernel<8><<<grid, threads, 0, s>>>(a);
  else rope_cache_kernel<1><<<grid, threads, 0, s>>>(a);
  check_launch("rope/cache");
}

void rms_norm_launch(const void* x, const void* w, void* out, int64_t rows, int dim, float eps,
                     void* stream) {
  if (rows <= 0) return;
  auto on16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec = dim % 8 == 0 && dim <= kNormThreads * 8 * kNormVectors && on16(x) && on16(w) && on16(out);
  auto kernel = vec ? rms_norm_vec_kernel : rms_norm_kernel;
  kernel<<<static_cast<unsigned>(rows), kNormThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(w), static_cast<uint16_t*>(out), dim,
      eps);
  check_launch("rms_norm");
}

void swiglu_launch(const void* gu, void* out, int64_t rows, int64_t inner, void* stream) {
  const int64_t n = rows * inner;
  if (n <= 0) return;
  const int threads = 256;
  auto s = static_cast<cudaStream_t>(stream);
  auto g = static_cast<const uint16_t*>(gu);
  auto o = static_cast<uint16_t*>(out);
  const bool wide = inner % 8 == 0 && reinterpret_cast<uintptr_t>(gu) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (wide) {
    const int64_t threads_needed = n / 8;
    swiglu_kernel<8><<<static_cast<unsigned>((threads_needed + threads - 1) / threads), threads, 0, s>>>(
        g, o, rows, inner);
  } else {
    swiglu_kernel<1><<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, s>>>(
        g, o, rows, inner);
  }
  check_launch("swiglu");
}

}  // namespace policy
