#include "policy/cuda_ops.hpp"

#if POLICY_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <mutex>

#include "policy/decode_attention.hpp"
#include "policy/decode_kernels.hpp"
#include "policy/train_kernels.hpp"
#endif

namespace policy {

DecodeKernels& decode_kernels() {
  static DecodeKernels k;
  return k;
}

#if POLICY_CUDA

static bool aligned16(const torch::Tensor& t) {
  return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}

torch::Tensor fused_decode_attention(const torch::Tensor& q, const torch::Tensor& k,
                                     const torch::Tensor& v, const torch::Tensor& bias,
                                     double scale, const torch::Tensor& last_column) {
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
  const c10::cuda::CUDAGuard on_device(q.device());  // launches go to the current device
  DecodeAttentionArgs a;
  if (bias.defined()) {
    if (bias.scalar_type() != torch::kFloat32 || bias.dim() != 4 || bias.size(0) != B ||
        bias.size(1) != 1 || bias.size(2) != 1 || bias.size(3) != S || bias.stride(3) != 1)
      return {};
    a.bias = bias.data_ptr<float>();
    a.bias_sb = bias.stride(0);
  }
  if (last_column.defined()) {
    if (!last_column.is_cuda() || last_column.scalar_type() != torch::kInt64 ||
        last_column.numel() != 1)
      return {};
    a.last_column = last_column.data_ptr<int64_t>();
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
  a.tensor_cores = decode_kernels().tensor_core_attention;
  a.tiles_per_block = decode_kernels().attention_tiles_per_block;
  torch::Tensor out = torch::empty({B, 1, H * D}, q.options());
  torch::Tensor partial = torch::empty(
      {decode_attention_partial_floats(a)},
      q.options().dtype(torch::kFloat32));
  a.out = out.data_ptr();
  a.partial = partial.data_ptr<float>();
  decode_attention_launch(a, c10::cuda::getCurrentCUDAStream(q.device().index()).stream());
  return out;
}

static void* stream_of(const torch::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

static bool bf16_cuda(const torch::Tensor& t) {
  return t.defined() && t.is_cuda() && t.scalar_type() == torch::kBFloat16;
}

torch::Tensor fused_rope_cache(const torch::Tensor& qkv, const torch::Tensor& cos,
                               const torch::Tensor& sin, torch::Tensor& k_cache,
                               torch::Tensor& v_cache, const torch::Tensor& slot,
                               int64_t column) {
  if (!decode_kernels().fused_elementwise) return {};
  if (!bf16_cuda(qkv) || !bf16_cuda(cos) || !bf16_cuda(sin) || !bf16_cuda(k_cache) ||
      !bf16_cuda(v_cache) || qkv.dim() != 4 || qkv.size(1) != 1 || !qkv.is_contiguous() ||
      !cos.is_contiguous() || !sin.is_contiguous() || k_cache.dim() != 4 ||
      k_cache.sizes() != v_cache.sizes() || k_cache.strides() != v_cache.strides() ||
      k_cache.stride(3) != 1)
    return {};
  const int64_t B = qkv.size(0), D = qkv.size(3), Hk = k_cache.size(1);
  const int64_t H = qkv.size(2) - 2 * Hk;
  if (H <= 0 || D % 2 != 0 || k_cache.size(0) != B || k_cache.size(3) != D ||
      cos.numel() != B * D || sin.numel() != B * D)
    return {};
  if (slot.defined()) {
    if (!slot.is_cuda() || slot.scalar_type() != torch::kInt64 || slot.numel() != 1) return {};
  } else if (column < 0 || column >= k_cache.size(2)) {
    return {};
  }
  const c10::cuda::CUDAGuard on_device(qkv.device());  // launches go to the current device
  torch::Tensor q = torch::empty({B, H, 1, D}, qkv.options());
  RopeCacheArgs a;
  a.qkv = qkv.data_ptr();
  a.cos = cos.data_ptr();
  a.sin = sin.data_ptr();
  a.q_out = q.data_ptr();
  a.k_cache = k_cache.data_ptr();
  a.v_cache = v_cache.data_ptr();
  a.c_sb = k_cache.stride(0);
  a.c_sh = k_cache.stride(1);
  a.c_ss = k_cache.stride(2);
  a.slot = slot.defined() ? slot.data_ptr<int64_t>() : nullptr;
  a.column = column;
  a.rows = static_cast<int>(B);
  a.heads = static_cast<int>(H);
  a.kv_heads = static_cast<int>(Hk);
  a.head_dim = static_cast<int>(D);
  rope_cache_launch(a, stream_of(qkv));
  return q;
}

torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (!decode_kernels().fused_elementwise || !bf16_cuda(x) || !bf16_cuda(weight) ||
      !x.is_contiguous() || !weight.is_contiguous() || weight.dim() != 1 ||
      x.size(-1) != weight.size(0))
    return {};
  const c10::cuda::CUDAGuard on_device(x.device());  // launches go to the current device
  torch::Tensor out = torch::empty_like(x);
  const int64_t dim = x.size(-1);
  rms_norm_launch(x.data_ptr(), weight.data_ptr(), out.data_ptr(), x.numel() / dim,
                  static_cast<int>(dim), static_cast<float>(eps), stream_of(x));
  return out;
}

torch::Tensor fused_swiglu(const torch::Tensor& gu) {
  if (!decode_kernels().fused_elementwise || !bf16_cuda(gu) || !gu.is_contiguous() ||
      gu.size(-1) % 2 != 0)
    return {};
  const int64_t inner = gu.size(-1) / 2;
  std::vector<int64_t> shape = gu.sizes().vec();
  shape.back() = inner;
  const c10::cuda::CUDAGuard on_device(gu.device());  // launches go to the current device
  torch::Tensor out = torch::empty(shape, gu.options());
  swiglu_launch(gu.data_ptr(), out.data_ptr(), gu.numel() / gu.size(-1), inner, stream_of(gu));
  return out;
}

torch::Tensor fused_swiglu_backward(const torch::Tensor& gu, const torch::Tensor& grad) {
  if (!decode_kernels().fused_training || !bf16_cuda(gu) || !bf16_cuda(grad) || !gu.is_contiguous() ||
      !grad.is_contiguous() || gu.size(-1) % 2 != 0 || grad.numel() * 2 != gu.numel())
    return {};
  const c10::cuda::CUDAGuard on_device(gu.device());  // launches go to the current device
  torch::Tensor dgu = torch::empty_like(gu);
  const int64_t inner = gu.size(-1) / 2;
  swiglu_backward_launch(gu.data_ptr(), grad.data_ptr(), dgu.data_ptr(), gu.numel() / gu.size(-1), inner,
                         stream_of(gu));
  return dgu;
}

torch::Tensor fused_rope_rows(const torch::Tensor& x, const torch::Tensor& cos,
                              const torch::Tensor& sin, bool backward) {
  if (!decode_kernels().fused_training || !bf16_cuda(x) || !bf16_cuda(cos) || !bf16_cuda(sin) ||
      x.dim() != 4 || !x.is_contiguous() || !cos.is_contiguous() || !sin.is_contiguous() ||
      x.size(3) % 2 != 0 || cos.numel() != x.size(0) * x.size(1) * x.size(3) || sin.numel() != cos.numel())
    return {};
  const c10::cuda::CUDAGuard on_device(x.device());  // launches go to the current device
  torch::Tensor out = torch::empty_like(x);
  const int64_t d = x.size(3);
  rope_rows_launch(x.data_ptr(), cos.data_ptr(), sin.data_ptr(), out.data_ptr(), x.numel() / d,
                   static_cast<int>(x.size(2)), static_cast<int>(d), backward, stream_of(x));
  return out;
}

std::pair<torch::Tensor, torch::Tensor> fused_sample(const torch::Tensor& logits,
                                                     double temperature) {
  if (!decode_kernels().fused_sampler || !logits.is_cuda() || logits.dim() != 2 ||
      logits.stride(1) != 1 || !(temperature > 0) || logits.size(1) < 1 ||
      (logits.scalar_type() != torch::kBFloat16 && logits.scalar_type() != torch::kFloat32))
    return {};
  const c10::cuda::CUDAGuard on_device(logits.device());  // launches go to the current device
  SampleArgs a;
  a.logits = logits.data_ptr();
  a.logits_fp32 = logits.scalar_type() == torch::kFloat32;
  a.row_stride = logits.stride(0);
  a.rows = static_cast<int>(logits.size(0));
  a.vocab = static_cast<int>(logits.size(1));
  a.inv_temperature = static_cast<float>(1.0 / temperature);
  auto* gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
      {}, at::cuda::detail::getDefaultCUDAGenerator(logits.device().index()));
  at::PhiloxCudaState rng;
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    rng = gen->philox_cuda_state(sample_offset_increment(a.rows, a.vocab));
  }
  if (rng.captured_) {  // inside a graph capture: the replay supplies seed and offset
    a.seed_ptr = rng.seed_.ptr;
    a.offset_ptr = rng.offset_.ptr;
    a.offset_add = rng.offset_intragraph_;
  } else {
    a.seed = rng.seed_.val;
    a.offset = rng.offset_.val;
  }
  torch::Tensor tokens = torch::empty({logits.size(0)}, logits.options().dtype(torch::kInt64));
  torch::Tensor logprobs = torch::empty({logits.size(0)}, logits.options().dtype(torch::kFloat32));
  torch::Tensor scratch = torch::empty({sample_scratch_bytes(a.rows, a.vocab)},
                                      logits.options().dtype(torch::kUInt8));
  a.scratch = scratch.data_ptr();
  a.tokens = tokens.data_ptr<int64_t>();
  a.logprobs = logprobs.data_ptr<float>();
  sample_launch(a, stream_of(logits));
  return {tokens, logprobs};
}

#else

std::pair<torch::Tensor, torch::Tensor> fused_sample(const torch::Tensor&, double) { return {}; }

torch::Tensor fused_decode_attention(const torch::Tensor&, const torch::Tensor&,
                                     const torch::Tensor&, const torch::Tensor&, double,
                                     const torch::Tensor&) {
  return {};
}

torch::Tensor fused_rope_cache(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                               torch::Tensor&, torch::Tensor&, const torch::Tensor&, int64_t) {
  return {};
}

torch::Tensor fused_rms_norm(const torch::Tensor&, const torch::Tensor&, double) { return {}; }

torch::Tensor fused_swiglu(const torch::Tensor&) { return {}; }

torch::Tensor fused_swiglu_backward(const torch::Tensor&, const torch::Tensor&) { return {}; }

torch::Tensor fused_rope_rows(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, bool) {
  return {};
}

#endif

}  // namespace policy
