#include "policy/cuda_ops.hpp"

#if POLICY_CUDA
#include <c10/cuda/CUDAStream.h>

#include "policy/decode_attention.hpp"
#endif

namespace policy {

#if POLICY_CUDA

static bool aligned16(const torch::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

torch::Tensor fused_decode_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const torch::Tensor& bias,
                                     double scale) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(2) != 1) return {};
  const int64_t B = q.size(0), H = q.size(1), D = q.size(3), Hk = k.size(1), S = k.size(2);
  if (!q.is_cuda() || q.scalar_type() != torch::kBFloat16 || k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type() || k.sizes() != v.sizes() || k.strides() != v.strides() ||
      k.size(0) != B || k.size(3) != D || S < 1 ||
      !decode_attention_supported(static_cast<int>(H), static_cast<int>(Hk), static_cast<int>(D)))
    return {};
  // 16-byte loads: rows of d contiguous and every row start 16-byte aligned.
  if (q.stride(3) != 1 || k.stride(3) != 1 || !aligned16(q) || !aligned16(k) || !aligned16(v))
    return {};
  for (int64_t s : {q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2)})
    if (s % 8 != 0) return {};
  DecodeAttentionArgs a;
  if (bias.defined()) {
    if (bias.scalar_type() != torch::kFloat32 || bias.dim() != 4 || bias.size(0) != B ||
        bias.size(1) != 1 || bias.size(2) != 1 || bias.size(3) != S || bias.stride(3) != 1)
      return {};
    a.bias = bias.data_ptr<float>();
    a.bias_sb = bias.stride(0);
  }
  a.q = q.data_ptr();
  a.q_sb = q.stride(0);
  a.q_sh = q.stride(1);
  a.k = k.data_ptr();
  a.v = v.data_ptr();
  a.kv_sb = k.stride(0);
  a.kv_sh = k.stride(1);
  a.kv_ss = k.stride(2);
  a.batch = static_cast<int>(B);
  a.heads = static_cast<int>(H);
  a.kv_heads = static_cast<int>(Hk);
  a.head_dim = static_cast<int>(D);
  a.span = static_cast<int>(S);
  a.scale = static_cast<float>(scale);
  torch::Tensor out = torch::empty({B, 1, H * D}, q.options());
  torch::Tensor partial = torch::empty(
      {decode_attention_partial_floats(a.batch, a.heads, a.head_dim, a.span)},
      q.options().dtype(torch::kFloat32));
  a.out = out.data_ptr();
  a.partial = partial.data_ptr<float>();
  decode_attention_launch(a, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  return out;
}

#else

torch::Tensor fused_decode_attention(const torch::Tensor&, const torch::Tensor&,
                                     const torch::Tensor&, const torch::Tensor&, double) {
  return {};
}

#endif

}  // namespace policy
