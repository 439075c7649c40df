// Decode attention (see decode_attention.hpp): the SIMT kernel first, then the
// tensor-core kernel, then the choice between them and of their splits.
// One file over 600 lines: both kernels share the split and tile arithmetic that the
// choice between them reads, and are checked against each other line by line.
#include "policy/decode_attention.hpp"

#include <algorithm>
#include <cmath>

#include "policy/cuda_common.cuh"

namespace policy {
namespace {

// ---- The SIMT kernel ----

constexpr int kThreads = 128;

// Block (split, kv head, row): keys [split * chunk, min(span, (split + 1) * chunk)),
// chunk = NG * TILE: a group of D/8 lanes owns TILE keys (each lane 8 of their dims, one
// 16-byte load per key for k and one for v), all loaded at once, so a block has its whole
// chunk in flight (memory latency, not bandwidth, bounds a block's life: short blocks and
// many of them keep the memory busy). Each group keeps an online softmax (max, sum,
// weighted values) for the G query heads; the groups are merged through shared memory
// into one partial result per split. When the rows alone fill the GPU (large batches) a
// block instead walks its row's whole span, tile after tile, and writes the output itself:
// no partial results, no second kernel.
template <int D, int TILE>
__host__ __device__ constexpr int chunk_of() { return (kThreads / (D / 8)) * TILE; }

// Loads a lane group's TILE keys and values from base on (zeros past s_end).
template <int TILE>
__device__ __forceinline__ void load_tile(uint4 (&kr)[TILE], uint4 (&vr)[TILE], const uint16_t* kp,
                                          const uint16_t* vp, int64_t kv_ss, int base, int s_end) {
#pragma unroll
  for (int j = 0; j < TILE; ++j) {
    const int s = base + j;
    if (s < s_end) {
      kr[j] = *reinterpret_cast<const uint4*>(kp + s * kv_ss);
      vr[j] = *reinterpret_cast<const uint4*>(vp + s * kv_ss);
    } else {
      kr[j] = vr[j] = make_uint4(0, 0, 0, 0);
    }
  }
}

// Adds a lane group's tile to its online softmax (max m, sum l, weighted values acc) for
// the G query heads.
template <int D, int G, int TILE>
__device__ __forceinline__ void add_tile(float (&m)[G], float (&l)[G], float (&acc)[G][8],
                                         const float (&q)[G][8], const uint4 (&kr)[TILE],
                                         const uint4 (&vr)[TILE], const float* bp, int base,
                                         int s_end) {
  constexpr int L = D / 8;
  float sc[TILE][G];
#pragma unroll
  for (int j = 0; j < TILE; ++j) {
    float kf[8];
    bf16x8_to_float(kr[j], kf);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      float d = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i) d = fmaf(q[g][i], kf[i], d);
      sc[j][g] = d;
    }
  }
#pragma unroll
  for (int off = L / 2; off >= 1; off >>= 1)
#pragma unroll
    for (int j = 0; j < TILE; ++j)
#pragma unroll
      for (int g = 0; g < G; ++g) sc[j][g] += __shfl_xor_sync(0xffffffffu, sc[j][g], off);
#pragma unroll
  for (int j = 0; j < TILE; ++j) {
    const int s = base + j;
    const float add = s < s_end ? (bp ? bp[s] : 0.f) : -INFINITY;
#pragma unroll
    for (int g = 0; g < G; ++g) sc[j][g] += add;
  }
  // Online softmax: rescale what was accumulated to the new maximum, then add the tile.
#pragma unroll
  for (int g = 0; g < G; ++g) {
    float mt = sc[0][g];
#pragma unroll
    for (int j = 1; j < TILE; ++j) mt = fmaxf(mt, sc[j][g]);
    const float mn = fmaxf(m[g], mt);
    if (mn == -INFINITY) {  // nothing unmasked yet: keep the empty state
#pragma unroll
      for (int j = 0; j < TILE; ++j) sc[j][g] = 0.f;
      continue;
    }
    const float corr = __expf(m[g] - mn);  // 0 when m was -inf
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < TILE; ++j) {
      sc[j][g] = __expf(sc[j][g] - mn);  // now the weight p
      sum += sc[j][g];
    }
    l[g] = l[g] * corr + sum;
    m[g] = mn;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] *= corr;
  }
#pragma unroll
  for (int j = 0; j < TILE; ++j) {
    float vf[8];
    bf16x8_to_float(vr[j], vf);
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[g][i] = fmaf(sc[j][g], vf[i], acc[g][i]);
  }
}

// Block `split` of (row, head) bh keeps its partial result here: D weighted values, then
// their max and sum (combine_kernel reads them).
template <int D>
__device__ __forceinline__ float* partial_of(const DecodeAttentionArgs& a, int64_t bh, int splits,
                                             int split) {
  return a.partial + (bh * splits + split) * (D + 2);
}

// A block past the step's last column has an empty result, which the merge skips.
template <int D>
__device__ __forceinline__ void write_empty(const DecodeAttentionArgs& a, int64_t bh, int splits,
                                            int split) {
  if (splits > 1) partial_of<D>(a, bh, splits, split)[D] = -INFINITY;
}

// Value d of a block's result for (row, head) bh: the output itself when the block took
// the whole span, else its partial result.
template <int D>
__device__ __forceinline__ void write_result(const DecodeAttentionArgs& a, int64_t bh, int d, int splits,
                                             int split, float mx, float sum, float val) {
  if (splits == 1) {
    static_cast<uint16_t*>(a.out)[bh * D + d] = float_to_bf16(sum > 0.f ? val / sum : 0.f);
    return;
  }
  float* p = partial_of<D>(a, bh, splits, split);
  p[d] = val;
  if (d == 0) {
    p[D] = mx;
    p[D + 1] = sum;
  }
}

template <int D, int G, int TILE, bool WALK>
__global__ void __launch_bounds__(kThreads, WALK ? 3 : 0)
    split_kernel(DecodeAttentionArgs a, int splits, int tiles_per_split) {
  constexpr int L = D / 8;          // lanes per key
  constexpr int NG = kThreads / L;  // lane groups per block
  constexpr int CHUNK = chunk_of<D, TILE>();
  const int split = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int grp = threadIdx.x / L, lane = threadIdx.x % L, dim0 = lane * 8;

  const int64_t kv_off = b * a.kv_sb + hk * a.kv_sh + dim0;
  const uint16_t* kp = static_cast<const uint16_t*>(a.k) + kv_off;
  const uint16_t* vp = static_cast<const uint16_t*>(a.v) + kv_off;
  const float* bp = a.bias ? a.bias + b * a.bias_sb : nullptr;
  const int span = a.last_column ? min(a.span, static_cast<int>(*a.last_column) + 1) : a.span;
  const int s_begin = split * CHUNK * tiles_per_split;
  const int s_end = min(span, s_begin + CHUNK * tiles_per_split);
  const int H = gridDim.y * G;
  if (s_begin >= span) {  // past the step's last column
    if (threadIdx.x < G) write_empty<D>(a, static_cast<int64_t>(b) * H + hk * G + threadIdx.x, splits, split);
    return;
  }

  float q[G][8];
  float m[G], l[G], acc[G][8];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    m[g] = -INFINITY;
    l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[g][i] = 0.f;
  }
  const uint16_t* qp = static_cast<const uint16_t*>(a.q) + b * a.q_sb +
                       static_cast<int64_t>(hk) * G * a.q_sh + dim0;
  auto load_queries = [&] {
#pragma unroll
    for (int g = 0; g < G; ++g) {
      bf16x8_to_float(*reinterpret_cast<const uint4*>(qp + g * a.q_sh), q[g]);
#pragma unroll
      for (int i = 0; i < 8; ++i) q[g][i] *= a.scale;
    }
  };
  uint4 kr[TILE], vr[TILE];
  if constexpr (WALK) {
    load_queries();
#pragma unroll 1
    for (int t0 = s_begin; t0 < s_end; t0 += CHUNK) {
      load_tile<TILE>(kr, vr, kp, vp, a.kv_ss, t0 + grp * TILE, s_end);
      add_tile<D, G, TILE>(m, l, acc, q, kr, vr, bp, t0 + grp * TILE, s_end);
    }
  } else {
    // The queries are loaded after the keys and values: all loads are in flight together.
    load_tile<TILE>(kr, vr, kp, vp, a.kv_ss, s_begin + grp * TILE, s_end);
    load_queries();
    add_tile<D, G, TILE>(m, l, acc, q, kr, vr, bp, s_begin + grp * TILE, s_end);
  }

  // Merge the groups: shared [group][g] max and sum, [group][g][d] weighted values.
  __shared__ float sm_m[NG][G], sm_l[NG][G];
  __shared__ float sm_acc[NG][G][D];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (lane == 0) {
      sm_m[grp][g] = m[g];
      sm_l[grp][g] = l[g];
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) sm_acc[grp][g][dim0 + i] = acc[g][i];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += kThreads) {
    const int g = idx / D, d = idx % D;
    float mx = -INFINITY;
    for (int r = 0; r < NG; ++r) mx = fmaxf(mx, sm_m[r][g]);
    float sum = 0.f, val = 0.f;
    if (mx != -INFINITY) {
      for (int r = 0; r < NG; ++r) {
        const float w = __expf(sm_m[r][g] - mx);
        sum += sm_l[r][g] * w;
        val += sm_acc[r][g][d] * w;
      }
    }
    write_result<D>(a, static_cast<int64_t>(b) * H + hk * G + g, d, splits, split, mx, sum, val);
  }
}

// Block (row * heads + head), one thread per dim: the splits' partial results weighted by
// exp(their max - the overall max).
template <int D>
__global__ void __launch_bounds__(D) combine_kernel(const float* __restrict__ partial,
                                                    uint16_t* __restrict__ out, int splits) {
  const int64_t bh = blockIdx.x;
  const int d = threadIdx.x;
  const float* p = partial + bh * splits * (D + 2);
  float mx = -INFINITY;
  for (int s = 0; s < splits; ++s) mx = fmaxf(mx, p[s * (D + 2) + D]);
  float sum = 0.f, val = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float ms = p[s * (D + 2) + D];
    if (ms == -INFINITY) continue;
    const float w = __expf(ms - mx);
    sum += p[s * (D + 2) + D + 1] * w;
    val += p[s * (D + 2) + d] * w;
  }
  out[bh * D + d] = float_to_bf16(sum > 0.f ? val / sum : 0.f);
}

constexpr int kTile = 8;  // keys per lane group

// ---- The tensor-core kernel ----
//
// Block (split, kv head, row), four warps. Tiles of 64 keys, their values and their mask
// biases stream into shared memory (cp.async, kMmaStages tiles deep), so a block has the
// next tile's loads in flight while it computes. Each warp takes 16 keys of a tile: the scores S = Q K^T on the tensor
// cores (mma m16n8k16: the G query heads are rows 0..G-1 of the 16, the keys the columns),
// the online softmax on the scores in registers (two shuffles a tile for the maximum), then
// O += P V on the tensor cores, P rounded to bf16 (its sum is taken of the rounded values,
// so the weights stay normalised). The warps merge through shared memory as the SIMT
// kernel's lane groups do. Rows 8..15 of each mma are padding, free on the tensor cores.

constexpr int kMmaWarps = 4;
constexpr int kMmaKeys = 16 * kMmaWarps;  // keys a tile
constexpr int kMmaStages = 2;

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared memory; zeros when !full (nothing is read then).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(full ? 16 : 0));
}
// The same for 4 bytes (any float's address).
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src, bool full) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(full ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a b for a 16x16 A whose rows 8..15 are zero (a0: row g, columns 2t, 2t+1; a2: the
// same columns + 8) and a 16x8 B (b0: rows 2t, 2t+1 of column g; b1: rows + 8).
__device__ __forceinline__ void mma_rows8(float (&c)[4], uint32_t a0, uint32_t a2, uint32_t b0,
                                          uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

// Two floats as bf16 (round to nearest even), lo in the low half.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Byte offset in a tile of the 16-byte chunk c of key `key`; chunks are XOR-swizzled by
// the key's low three bits so that ldmatrix's eight rows fall in distinct banks.
template <int D>
__device__ __forceinline__ uint32_t chunk_offset(int key, int c) {
  return static_cast<uint32_t>((key * (D / 8) + (c ^ (key & 7))) * 16);
}

template <int D>
__host__ __device__ constexpr int mma_tile_bytes() { return kMmaKeys * D * 2; }

// A stage: the tile's keys, its values, then its 64 mask biases.
template <int D>
__host__ __device__ constexpr int mma_stage_bytes() { return 2 * mma_tile_bytes<D>() + kMmaKeys * 4; }

template <int D>
__host__ __device__ constexpr int mma_shared_bytes() {
  return kMmaStages * mma_stage_bytes<D>();  // >= the merge's (4 x 8 x D + 64) floats
}

template <int D>
__global__ void __launch_bounds__(kMmaWarps * 32)
    mma_kernel(DecodeAttentionArgs a, int G, int splits, int tiles_per_split) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // cp.async, bf16 mma (mma_capable checks)
  constexpr int C = D / 8;  // 16-byte chunks a key
  constexpr int kThreadsMma = kMmaWarps * 32;
  extern __shared__ __align__(128) unsigned char smem[];
  const int split = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gq = lane / 4, tq = lane % 4;
  const int span = a.last_column ? min(a.span, static_cast<int>(*a.last_column) + 1) : a.span;
  const int s_begin = split * kMmaKeys * tiles_per_split;
  const int s_end = min(span, s_begin + kMmaKeys * tiles_per_split);
  const int H = gridDim.y * G;
  if (s_begin >= span) {  // past the step's last column
    if (threadIdx.x < G) write_empty<D>(a, static_cast<int64_t>(b) * H + hk * G + threadIdx.x, splits, split);
    return;
  }
  const int64_t kv_off = b * a.kv_sb + hk * a.kv_sh;
  const uint16_t* kp = static_cast<const uint16_t*>(a.k) + kv_off;
  const uint16_t* vp = static_cast<const uint16_t*>(a.v) + kv_off;
  const float* bp = a.bias ? a.bias + b * a.bias_sb : nullptr;
  const int ntiles = (s_end - s_begin + kMmaKeys - 1) / kMmaKeys;
  const uint32_t sbase = shared_address(smem);
  constexpr uint32_t kTileBytes = mma_tile_bytes<D>(), kStageBytes = mma_stage_bytes<D>();

  auto load_tile = [&](int t) {
    const uint32_t kdst = sbase + (t % kMmaStages) * kStageBytes, vdst = kdst + kTileBytes;
    const int t0 = s_begin + t * kMmaKeys;
    // The biases come with the tile, so that the softmax waits on no load of its own.
    if (bp && threadIdx.x < kMmaKeys) {
      const int s = t0 + threadIdx.x;
      cp_async4(vdst + kTileBytes + threadIdx.x * 4, bp + (s < s_end ? s : s_begin), s < s_end);
    }
#pragma unroll
    for (int it = 0; it < kMmaKeys * C / kThreadsMma; ++it) {
      const int i = threadIdx.x + it * kThreadsMma;
      const int key = i / C, c = i % C, s = t0 + key;
      const bool in = s < s_end;
      const int64_t off = static_cast<int64_t>(in ? s : s_begin) * a.kv_ss + c * 8;
      const uint32_t o = chunk_offset<D>(key, c);
      cp_async16(kdst + o, kp + off, in);
      cp_async16(vdst + o, vp + off, in);
    }
  };
#pragma unroll
  for (int t = 0; t < kMmaStages - 1; ++t) {
    if (t < ntiles) load_tile(t);
    cp_async_commit();
  }

  // The thread's query head gq (zero rows past G): dims 16 ks + 2 tq, +1 and the same + 8.
  uint32_t qa[D / 16][2];
  {
    const bool real = gq < G;
    const uint16_t* qp = static_cast<const uint16_t*>(a.q) + b * a.q_sb +
                         static_cast<int64_t>(hk * G + (real ? gq : 0)) * a.q_sh + 2 * tq;
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      qa[ks][0] = real ? *reinterpret_cast<const uint32_t*>(qp + 16 * ks) : 0u;
      qa[ks][1] = real ? *reinterpret_cast<const uint32_t*>(qp + 16 * ks + 8) : 0u;
    }
  }

  float o[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m = -INFINITY, l = 0.f;
  const int mi = lane / 8, row = lane % 8;  // ldmatrix: the matrix and row this lane addresses

#pragma unroll 1
  for (int t = 0; t < ntiles; ++t) {
    cp_async_wait<kMmaStages - 2>();
    __syncthreads();  // tile t is in; every warp is done with the stage the next load reuses
    if (t + kMmaStages - 1 < ntiles) load_tile(t + kMmaStages - 1);
    cp_async_commit();
    const int first = s_begin + t * kMmaKeys + warp * 16;  // the warp's first key
    if (first >= s_end) continue;
    const uint32_t ks_base = sbase + (t % kMmaStages) * kStageBytes, vs_base = ks_base + kTileBytes;
    const float* tile_bias =
        reinterpret_cast<const float*>(smem + (t % kMmaStages) * kStageBytes + 2 * kTileBytes);
    const int key0 = warp * 16;

    float s0[4] = {0.f, 0.f, 0.f, 0.f}, s1[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) {
      uint32_t r[4];
      const int key = key0 + (mi >> 1) * 8 + row;
      ldmatrix_x4(r, ks_base + chunk_offset<D>(key, 2 * ks + (mi & 1)));
      mma_rows8(s0, qa[ks][0], qa[ks][1], r[0], r[1]);  // keys 0..7 of the warp's 16
      mma_rows8(s1, qa[ks][0], qa[ks][1], r[2], r[3]);  // keys 8..15
    }
    // This thread's scores of head gq: keys first + 2 tq, +1, and the same + 8.
    float x[4] = {s0[0], s0[1], s1[0], s1[1]};
    float mt = -INFINITY;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int s = first + (i >> 1) * 8 + 2 * tq + (i & 1);
      x[i] = s < s_end ? x[i] * a.scale + (bp ? tile_bias[s - s_begin - t * kMmaKeys] : 0.f) : -INFINITY;
      mt = fmaxf(mt, x[i]);
    }
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
    const float mn = fmaxf(m, mt);
    const float base = mn == -INFINITY ? 0.f : mn;  // nothing unmasked yet: all weights 0
    const float corr = __expf(m - base);
    const uint32_t p01 = pack_bf16x2(__expf(x[0] - base), __expf(x[1] - base));
    const uint32_t p23 = pack_bf16x2(__expf(x[2] - base), __expf(x[3] - base));
    l = l * corr + (__uint_as_float(p01 << 16) + __uint_as_float(p01 & 0xffff0000u)) +
        (__uint_as_float(p23 << 16) + __uint_as_float(p23 & 0xffff0000u));
    m = mn;
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o[j][0] *= corr;
      o[j][1] *= corr;
    }
#pragma unroll
    for (int nn = 0; nn < D / 16; ++nn) {
      uint32_t r[4];
      const int key = key0 + (mi & 1) * 8 + row;
      ldmatrix_x4_trans(r, vs_base + chunk_offset<D>(key, 2 * nn + (mi >> 1)));
      mma_rows8(o[2 * nn], p01, p23, r[0], r[1]);      // dims 16 nn .. + 7
      mma_rows8(o[2 * nn + 1], p01, p23, r[2], r[3]);  // dims 16 nn + 8 .. + 15
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the stages are free: the merge reuses them

  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  float* sm_o = reinterpret_cast<float*>(smem);  // [warp][head][D]
  float* sm_m = sm_o + kMmaWarps * 8 * D;        // [warp][head]
  float* sm_l = sm_m + kMmaWarps * 8;
  if (gq < G) {
    if (tq == 0) {
      sm_m[warp * 8 + gq] = m;
      sm_l[warp * 8 + gq] = l;
    }
#pragma unroll
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<float2*>(sm_o + (warp * 8 + gq) * D + 8 * j + 2 * tq) = make_float2(o[j][0], o[j][1]);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * D; idx += kThreadsMma) {
    const int g = idx / D, d = idx % D;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kMmaWarps; ++w) mx = fmaxf(mx, sm_m[w * 8 + g]);
    float sum = 0.f, val = 0.f;
    if (mx != -INFINITY) {
#pragma unroll
      for (int w = 0; w < kMmaWarps; ++w) {
        const float wt = __expf(sm_m[w * 8 + g] - mx);
        sum += sm_l[w * 8 + g] * wt;
        val += sm_o[(w * 8 + g) * D + d] * wt;
      }
    }
    write_result<D>(a, static_cast<int64_t>(b) * H + hk * G + g, d, splits, split, mx, sum, val);
  }
#endif
}

struct Plan {
  bool mma;
  int splits, tiles_per_split;
};

// Whether the tensor-core kernel runs here: bf16 mma and cp.async need compute capability
// 8, on the GPU and in the code built for it (a build for older GPUs, run on a newer one
// from its PTX, has the kernel's body compiled out).
bool mma_capable() {
  return once_per_device([](int device) {
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaFuncAttributes attr{};
    const bool built = cudaFuncGetAttributes(&attr, mma_kernel<128>) == cudaSuccess && attr.ptxVersion >= 80;
    cudaGetLastError();  // a kernel without an image for this GPU is an answer, not an error
    return major >= 8 && built;
  });
}

Plan plan_for(const DecodeAttentionArgs& a) {
  const int64_t pairs = static_cast<int64_t>(a.batch) * a.kv_heads;
  if (a.tensor_cores && mma_capable()) {
    const int tiles = (a.span + kMmaKeys - 1) / kMmaKeys;
    if (a.tiles_per_block > 0) {
      const int per = std::min(tiles, a.tiles_per_block);
      return {true, (tiles + per - 1) / per, per};
    }
    // Blocks walk as much of the span as keeps one wave of blocks (3 an SM) busy: the
    // whole span from as many (row, kv head) pairs on, no merge then. Walking is cheaper
    // than splitting wherever it fills the GPU: on an H100 at 64 rows of the 14B config
    // (512 pairs, 1.3 waves) the whole span took 27 us against 37 us cut into single tiles.
    const int64_t want = (3 * static_cast<int64_t>(sm_count()) + pairs - 1) / pairs;
    const int splits = static_cast<int>(std::min<int64_t>(std::max<int64_t>(want, 1), tiles));
    const int per = (tiles + splits - 1) / splits;
    return {true, (tiles + per - 1) / per, per};
  }
  const int chunk = a.head_dim == 64 ? chunk_of<64, kTile>() : chunk_of<128, kTile>();
  const int tiles = (a.span + chunk - 1) / chunk;
  // From as many (row, kv head) pairs as fill the GPU twice over (4 blocks an SM), a block
  // walks its row's whole span instead of one tile of it.
  if (pairs >= 2 * 4 * sm_count()) return {false, 1, tiles};
  return {false, tiles, 1};
}

template <int D>
void launch_mma(const DecodeAttentionArgs& a, const Plan& p, cudaStream_t stream) {
  constexpr int bytes = mma_shared_bytes<D>();
  static_assert((kMmaWarps * 8 * D + 2 * kMmaWarps * 8) * 4 <= bytes, "the merge fits the stages");
  if (bytes > 48 * 1024)  // above the default limit of dynamic shared memory
    once_per_device([](int) {
      return cudaFuncSetAttribute(mma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    });
  const dim3 grid(p.splits, a.kv_heads, a.batch);
  mma_kernel<D><<<grid, kMmaWarps * 32, bytes, stream>>>(a, a.heads / a.kv_heads, p.splits,
                                                          p.tiles_per_split);
  if (p.splits > 1)
    combine_kernel<D><<<a.batch * a.heads, D, 0, stream>>>(a.partial, static_cast<uint16_t*>(a.out),
                                                            p.splits);
}

template <int D, int G>
void launch_g(const DecodeAttentionArgs& a, const Plan& p, cudaStream_t stream) {
  const dim3 grid(p.splits, a.kv_heads, a.batch);
  if (p.tiles_per_split > 1)
    split_kernel<D, G, kTile, true><<<grid, kThreads, 0, stream>>>(a, p.splits, p.tiles_per_split);
  else
    split_kernel<D, G, kTile, false><<<grid, kThreads, 0, stream>>>(a, p.splits, 1);
  if (p.splits > 1)
    combine_kernel<D><<<a.batch * a.heads, D, 0, stream>>>(a.partial, static_cast<uint16_t*>(a.out),
                                                            p.splits);
}

template <int D>
void launch_d(const DecodeAttentionArgs& a, const Plan& p, cudaStream_t s) {
  if (p.mma) return launch_mma<D>(a, p, s);
  switch (a.heads / a.kv_heads) {
    case 1: return launch_g<D, 1>(a, p, s);
    case 2: return launch_g<D, 2>(a, p, s);
    case 3: return launch_g<D, 3>(a, p, s);
    case 4: return launch_g<D, 4>(a, p, s);
    case 5: return launch_g<D, 5>(a, p, s);
    case 6: return launch_g<D, 6>(a, p, s);
    case 7: return launch_g<D, 7>(a, p, s);
    case 8: return launch_g<D, 8>(a, p, s);
  }
}

}  // namespace

bool decode_attention_supported(int heads, int kv_heads, int head_dim) {
  if (kv_heads <= 0 || heads % kv_heads != 0) return false;
  const int g = heads / kv_heads;
  return (head_dim == 64 || head_dim == 128) && g >= 1 && g <= 8;
}

int64_t decode_attention_partial_floats(const DecodeAttentionArgs& a) {
  const Plan p = plan_for(a);
  return p.splits == 1 ? 0 : static_cast<int64_t>(a.batch) * a.heads * p.splits * (a.head_dim + 2);
}

void decode_attention_launch(const DecodeAttentionArgs& a, void* stream) {
  if (!decode_attention_supported(a.heads, a.kv_heads, a.head_dim))
    throw std::runtime_error("decode attention: unsupported shape");
  auto s = static_cast<cudaStream_t>(stream);
  const Plan p = plan_for(a);
  if (a.head_dim == 64) launch_d<64>(a, p, s);
  else launch_d<128>(a, p, s);
  check_launch("decode attention");
}

}  // namespace policy
