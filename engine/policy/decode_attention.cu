// Split-K decode attention (see decode_attention.hpp).
#include "policy/decode_attention.hpp"

#include <cmath>

#include "policy/cuda_common.cuh"

namespace policy {
namespace {

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
  if (s_begin >= span) {  // past the step's last column: an empty result, which merges as none
    if (threadIdx.x < G)
      a.partial[((static_cast<int64_t>(b) * H + hk * G + threadIdx.x) * splits + split) * (D + 2) + D] =
          -INFINITY;
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
    const int64_t bh = static_cast<int64_t>(b) * H + hk * G + g;
    if (splits == 1) {  // the whole span: the output itself
      static_cast<uint16_t*>(a.out)[bh * D + d] = float_to_bf16(sum > 0.f ? val / sum : 0.f);
      continue;
    }
    float* p = a.partial + (bh * splits + split) * (D + 2);
    p[d] = val;
    if (d == 0) {
      p[D] = mx;
      p[D + 1] = sum;
    }
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

struct Splits {
  int splits, tiles_per_split;
};

Splits splits_for(int batch, int kv_heads, int span, int head_dim) {
  const int chunk = head_dim == 64 ? chunk_of<64, kTile>() : chunk_of<128, kTile>();
  const int tiles = (span + chunk - 1) / chunk;
  // From as many (row, kv head) pairs as fill the GPU twice over (4 blocks an SM), a block
  // walks its row's whole span instead of one tile of it.
  if (static_cast<int64_t>(batch) * kv_heads >= 2 * 4 * sm_count()) return {1, tiles};
  return {tiles, 1};
}

template <int D, int G>
void launch_g(const DecodeAttentionArgs& a, cudaStream_t stream) {
  const Splits sp = splits_for(a.batch, a.kv_heads, a.span, D);
  const dim3 grid(sp.splits, a.kv_heads, a.batch);
  if (sp.tiles_per_split > 1)
    split_kernel<D, G, kTile, true><<<grid, kThreads, 0, stream>>>(a, sp.splits, sp.tiles_per_split);
  else
    split_kernel<D, G, kTile, false><<<grid, kThreads, 0, stream>>>(a, sp.splits, 1);
  if (sp.splits > 1)
    combine_kernel<D><<<a.batch * a.heads, D, 0, stream>>>(a.partial, static_cast<uint16_t*>(a.out),
                                                            sp.splits);
}

template <int D>
void launch_d(const DecodeAttentionArgs& a, cudaStream_t s) {
  switch (a.heads / a.kv_heads) {
    case 1: return launch_g<D, 1>(a, s);
    case 2: return launch_g<D, 2>(a, s);
    case 3: return launch_g<D, 3>(a, s);
    case 4: return launch_g<D, 4>(a, s);
    case 5: return launch_g<D, 5>(a, s);
    case 6: return launch_g<D, 6>(a, s);
    case 7: return launch_g<D, 7>(a, s);
    case 8: return launch_g<D, 8>(a, s);
  }
}

}  // namespace

bool decode_attention_supported(int heads, int kv_heads, int head_dim) {
  if (kv_heads <= 0 || heads % kv_heads != 0) return false;
  const int g = heads / kv_heads;
  return (head_dim == 64 || head_dim == 128) && g >= 1 && g <= 8;
}

int64_t decode_attention_partial_floats(int batch, int heads, int kv_heads, int head_dim, int span) {
  const Splits sp = splits_for(batch, kv_heads, span, head_dim);
  return sp.splits == 1 ? 0 : static_cast<int64_t>(batch) * heads * sp.splits * (head_dim + 2);
}

void decode_attention_launch(const DecodeAttentionArgs& a, void* stream) {
  if (!decode_attention_supported(a.heads, a.kv_heads, a.head_dim))
    throw std::runtime_error("decode attention: unsupported shape");
  auto s = static_cast<cudaStream_t>(stream);
  if (a.head_dim == 64) launch_d<64>(a, s);
  else launch_d<128>(a, s);
  check_launch("decode attention");
}

}  // namespace policy
