#include "policy/cpu_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace policy {

namespace {

typedef float Lanes __attribute__((vector_size(32)));  // eight floats: one AVX2 register
constexpr int64_t kLanes = 8;

// Eight floats from memory as one vector (a macro: a function returning one would have an
// ABI of its own outside the AVX2 target).
typedef float Lanes_u __attribute__((vector_size(32), aligned(4), may_alias));
#define ENGINE_LANES_AT(p) (*reinterpret_cast<const Lanes_u*>(p))

struct Inputs {
  const float *q, *k, *v, *bias;
  float* out;
  int64_t B, heads, kv, S, d;
  int64_t q_b, q_h, k_b, k_h, k_s, v_b, v_h, v_s, bias_b, bias_s;
};

// One row's key/value head: its G query heads read each key and value once. scores holds
// G x S floats, acc G x d.
__attribute__((always_inline)) inline void attend_group(const Inputs& in, int64_t b, int64_t kvh, float scale,
                                                        float* scores, float* acc) {
  const int64_t G = in.heads / in.kv, S = in.S, d = in.d;
  const float* k = in.k + b * in.k_b + kvh * in.k_h;
  const float* v = in.v + b * in.v_b + kvh * in.v_h;
  const float* bias = in.bias ? in.bias + b * in.bias_b : nullptr;
  for (int64_t s = 0; s < S; ++s) {
    const float* ks = k + s * in.k_s;
    for (int64_t g = 0; g < G; ++g) {
      const float* q = in.q + b * in.q_b + (kvh * G + g) * in.q_h;
      Lanes sum = {};
      for (int64_t i = 0; i < d; i += kLanes) sum += ENGINE_LANES_AT(q + i) * ENGINE_LANES_AT(ks + i);
      float dot = 0;
      for (int64_t l = 0; l < kLanes; ++l) dot += sum[l];
      scores[g * S + s] = dot * scale + (bias ? bias[s * in.bias_s] : 0.0f);
    }
  }
  for (int64_t g = 0; g < G; ++g) {
    float* row = scores + g * S;
    float top = -std::numeric_limits<float>::infinity();
    for (int64_t s = 0; s < S; ++s) top = std::max(top, row[s]);
    float total = 0;
    for (int64_t s = 0; s < S; ++s) total += row[s] = std::exp(row[s] - top);
    const float inv = 1.0f / total;
    for (int64_t s = 0; s < S; ++s) row[s] *= inv;
  }
  std::memset(acc, 0, sizeof(float) * G * d);
  for (int64_t s = 0; s < S; ++s) {
    const float* vs = v + s * in.v_s;
    for (int64_t g = 0; g < G; ++g) {
      const float p = scores[g * S + s];
      float* o = acc + g * d;
      for (int64_t i = 0; i < d; i += kLanes)
        *reinterpret_cast<Lanes_u*>(o + i) += p * ENGINE_LANES_AT(vs + i);
    }
  }
  float* out = in.out + (b * in.heads + kvh * G) * d;
  std::memcpy(out, acc, sizeof(float) * G * d);
}

__attribute__((always_inline)) inline void attend_all(const Inputs& in, float scale) {
  std::vector<float> scores(static_cast<size_t>(in.heads / in.kv * in.S)), acc(static_cast<size_t>(in.heads * in.d));
  for (int64_t b = 0; b < in.B; ++b)
    for (int64_t h = 0; h < in.kv; ++h) attend_group(in, b, h, scale, scores.data(), acc.data());
}

// The same code for two targets, chosen at run time: AVX2 with FMA where the CPU has them.
__attribute__((target("avx2,fma"))) void attend_all_avx2(const Inputs& in, float scale) { attend_all(in, scale); }
void attend_all_base(const Inputs& in, float scale) { attend_all(in, scale); }

}  // namespace

namespace detail {

bool cpu_attention_avx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

torch::Tensor cpu_decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& bias, double scale, bool avx2) {
  const auto f32_cpu = [](const torch::Tensor& t) {
    return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.dim() == 4;
  };
  if (!f32_cpu(q) || !f32_cpu(k) || !f32_cpu(v) || (bias.defined() && !f32_cpu(bias))) return {};
  if (torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad())) return {};
  const int64_t B = q.size(0), heads = q.size(1), d = q.size(3), kv = k.size(1), S = k.size(2);
  if (q.size(2) != 1 || d % kLanes != 0 || kv == 0 || heads % kv != 0 || S == 0) return {};
  if (k.size(0) != B || v.size(0) != B || v.size(1) != kv || v.size(2) != S || k.size(3) != d || v.size(3) != d)
    return {};
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1) return {};
  if (bias.defined() && (bias.size(0) != B || bias.size(3) != S || bias.size(1) != 1 || bias.size(2) != 1)) return {};
  torch::Tensor out = torch::empty({B, 1, heads * d}, q.options());
  Inputs in{q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
            bias.defined() ? bias.data_ptr<float>() : nullptr, out.data_ptr<float>(),
            B, heads, kv, S, d,
            q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
            bias.defined() ? bias.stride(0) : 0, bias.defined() ? bias.stride(3) : 0};
  if (avx2) attend_all_avx2(in, static_cast<float>(scale));
  else attend_all_base(in, static_cast<float>(scale));
  return out;
}

}  // namespace detail

torch::Tensor cpu_decode_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& bias, double scale) {
  return detail::cpu_decode_attention(q, k, v, bias, scale, detail::cpu_attention_avx2());
}

}  // namespace policy
