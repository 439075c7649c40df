#include "policy/model.hpp"

#include <cmath>
#include <sstream>

#include "policy/cuda_ops.hpp"
#include "policy/cpu_attention.hpp"
#include "policy/safetensors.hpp"

namespace policy {

using torch::Tensor;
namespace F = torch::nn::functional;

// ---- layers ---------------------------------------------------------------

LinearImpl::LinearImpl(int64_t in, int64_t out, bool has_bias, const torch::TensorOptions& o) {
  weight = register_parameter("weight", torch::empty({out, in}, o), false);
  if (has_bias) bias = register_parameter("bias", torch::empty({out}, o), false);
}

Tensor LinearImpl::forward(const Tensor& x) {
  if (!adapter || !adapter->enabled) return torch::linear(x, weight, bias);
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  Tensor rows = x.reshape({-1, x.size(-1)});
  return adapter->add_to(torch::linear(rows, weight, bias), rows).view(shape);
}

// y [rows, sum of outs], the fused output of `parts` for input x [rows, in], with the terms
// of their enabled adapters added, in one go when the adapters can share it.
static Tensor with_adapters(Tensor y, const Tensor& x, std::initializer_list<Linear> parts) {
  std::vector<Adapter*> group;
  Adapter* first = nullptr;
  for (const auto& p : parts) {
    Adapter* a = p->adapter && p->adapter->enabled ? p->adapter.get() : nullptr;
    group.push_back(a);
    if (!first) first = a;
  }
  if (!first) return y;
  if (Tensor out = first->add_group_to(y, x, group); out.defined()) return out;
  std::vector<Tensor> columns;
  int64_t at = 0, i = 0;
  for (const auto& p : parts) {
    const int64_t n = p->weight.size(0);
    Tensor part = y.narrow(1, at, n);
    columns.push_back(group[i] ? group[i]->add_to(part.contiguous(), x) : part);
    at += n, ++i;
  }
  return torch::cat(columns, 1);
}

EmbeddingImpl::EmbeddingImpl(int64_t n, int64_t dim, const torch::TensorOptions& o) {
  weight = register_parameter("weight", torch::empty({n, dim}, o), false);
}

RMSNormImpl::RMSNormImpl(int64_t dim, double e, const torch::TensorOptions& o) : eps(e) {
  weight = register_parameter("weight", torch::empty({dim}, o), false);
}

// A decode step (one token per row, no autograd) takes the model's own fused kernels
// (cuda_ops.hpp); everything else, training included, the plain operations.
static bool decode_step(const Tensor& x) {
  return c10::InferenceMode::is_enabled() && x.is_cuda() && x.dim() == 3 && x.size(1) == 1;
}

// Normalises in fp32, scales in the model's dtype (as transformers does).
Tensor RMSNormImpl::forward(const Tensor& x) {
  if (decode_step(x)) {
    Tensor out = fused_rms_norm(x, weight, eps);
    if (out.defined()) return out;
  }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // One kernel on CUDA (fp32 accumulation); the weight multiplies before the final
  // rounding, a difference far inside the dtype's noise.
  if (x.is_cuda()) return at::rms_norm(x, {x.size(-1)}, weight, eps);
#endif
  Tensor h = x.to(torch::kFloat32);
  h = h * torch::rsqrt(h.pow(2).mean(-1, true) + eps);
  return weight * h.to(x.scalar_type());
}

void KVCache::allocate(const ModelConfig& c, int64_t batch, int64_t capacity,
                       const torch::TensorOptions& o) {
  k.clear();
  v.clear();
  for (int64_t l = 0; l < c.num_layers; ++l) {
    // Zeros, not garbage: a masked column still enters q.k and p.v, and NaN * 0 is NaN.
    k.push_back(torch::zeros({batch, c.num_kv_heads, capacity, c.head_dim}, o));
    v.push_back(torch::zeros({batch, c.num_kv_heads, capacity, c.head_dim}, o));
  }
  len = 0;
}

void KVCache::select_rows(const Tensor& rows) {
  for (auto& t : k) t = t.index_select(0, rows);
  for (auto& t : v) t = t.index_select(0, rows);
}

// ---- attention --------------------------------------------------------------

AttentionImpl::AttentionImpl(const ModelConfig& c, const torch::TensorOptions& o)
    : heads(c.num_heads), kv_heads(c.num_kv_heads), head_dim(c.head_dim) {
  q_proj = register_module("q_proj", Linear(c.hidden_size, heads * head_dim, c.qkv_bias, o));
  k_proj = register_module("k_proj", Linear(c.hidden_size, kv_heads * head_dim, c.qkv_bias, o));
  v_proj = register_module("v_proj", Linear(c.hidden_size, kv_heads * head_dim, c.qkv_bias, o));
  o_proj = register_module("o_proj", Linear(heads * head_dim, c.hidden_size, c.o_bias, o));
}

// x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1] for halves x1, x2. With the
// sign folded into sin ([-sin, sin], see TransformerImpl::rope) it is x * cos + [x2, x1] *
// sin: three kernels (swap, multiply, multiply-add) instead of five.
// x [B,T,heads,d]; cos/sin [B,T,1,d].
static Tensor apply_rope(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  auto half = x.size(-1) / 2;
  Tensor swapped = torch::cat({x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return torch::addcmul(x * cos, swapped, sin);
}

// A training step's own kernels (cuda_ops.hpp): CUDA, bf16, contiguous, switched on.
static bool training_kernels_cover(const Tensor& t) {
  return decode_kernels().fused_training && decode_kernels().fused_elementwise && t.is_cuda() &&
         t.scalar_type() == torch::kBFloat16 && t.is_contiguous();
}

// What a training kernel returned: callers choose the kernel only where
// training_kernels_cover says it runs, so an undefined result is a broken promise.
static Tensor ran(Tensor t, const char* kernel) {
  TORCH_CHECK(t.defined(), kernel, ": the training kernel did not cover an input training_kernels_cover accepted");
  return t;
}

// RoPE in training as one kernel forward and one backward, where autograd's path runs the
// swap's copy, two multiplies and their backward. x [B,T,heads,d]; cos/sin [B,T,d].
struct RopeFunction : torch::autograd::Function<RopeFunction> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, Tensor cos, Tensor sin) {
    ctx->save_for_backward({cos, sin});
    return ran(fused_rope_rows(x, cos, sin, false), "rope");
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    return {ran(fused_rope_rows(grads[0].contiguous(), saved[0], saved[1], true), "rope backward"), Tensor(),
            Tensor()};
  }
};

static Tensor train_rope(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  if (training_kernels_cover(x) && training_kernels_cover(cos) && training_kernels_cover(sin))
    return RopeFunction::apply(x, cos, sin);
  return apply_rope(x, cos.unsqueeze(2), sin.unsqueeze(2));
}

static void fuse_linears(std::vector<Linear> parts, Tensor& weight, Tensor& bias) {
  torch::NoGradGuard no_grad;
  std::vector<Tensor> ws, bs;
  for (auto& p : parts) ws.push_back(p->weight), bs.push_back(p->bias);
  weight = torch::cat(ws, 0);
  if (bs[0].defined()) bias = torch::cat(bs, 0);
  int64_t at = 0;
  for (auto& p : parts) {
    int64_t n = p->weight.size(0);
    p->weight.set_data(weight.narrow(0, at, n));
    if (bias.defined()) p->bias.set_data(bias.narrow(0, at, n));
    at += n;
  }
}

void AttentionImpl::fuse() { fuse_linears({q_proj, k_proj, v_proj}, qkv_weight, qkv_bias); }

Tensor AttentionImpl::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                              const Tensor& bias, KVCache* cache, int layer) {
  return o_proj(attend(x, cos, sin, bias, cache, layer));
}

Tensor AttentionImpl::attend(const Tensor& x, const Tensor& cos, const Tensor& sin,
                             const Tensor& bias, KVCache* cache, int layer) {
  const int64_t B = x.size(0), T = x.size(1), G = heads / kv_heads;
  // Projections as [B,h,T,d]; RoPE on queries and keys in one pass when fused.
  Tensor q, k, v;
  Tensor c = cos.unsqueeze(2), s = sin.unsqueeze(2);
  if (qkv_weight.defined()) {
    Tensor rows = x.reshape({B * T, x.size(-1)});
    Tensor qkv = with_adapters(torch::linear(rows, qkv_weight, qkv_bias), rows, {q_proj, k_proj, v_proj})
                     .view({B, T, heads + 2 * kv_heads, head_dim});
    // A decode step's own kernel rotates q and k and writes k and v into the cache itself.
    if (cache && decode_step(x))
      q = fused_rope_cache(qkv, cos, sin, cache->k[layer], cache->v[layer], cache->slot, cache->len);
    if (!q.defined() && torch::GradMode::is_enabled()) {
      // Training: split (its backward is one concatenation, where narrow's fills a zero
      // tensor per part) and contiguous, so RoPE and attention run vectorised.
      auto parts = qkv.split_with_sizes({heads, kv_heads, kv_heads}, 2);
      q = train_rope(parts[0].contiguous(), cos, sin).transpose(1, 2);
      k = train_rope(parts[1].contiguous(), cos, sin).transpose(1, 2);
      v = parts[2].contiguous().transpose(1, 2);
    }
    if (!q.defined()) {
      Tensor qk = apply_rope(qkv.narrow(2, 0, heads + kv_heads), c, s);
      q = qk.narrow(2, 0, heads).transpose(1, 2);
      k = qk.narrow(2, heads, kv_heads).transpose(1, 2);
      v = qkv.narrow(2, heads + kv_heads, kv_heads).transpose(1, 2);
    }
  } else {
    q = apply_rope(q_proj(x).view({B, T, heads, head_dim}), c, s).transpose(1, 2);
    k = apply_rope(k_proj(x).view({B, T, kv_heads, head_dim}), c, s).transpose(1, 2);
    v = v_proj(x).view({B, T, kv_heads, head_dim}).transpose(1, 2);
  }
  if (cache && cache->slot.defined()) {
    if (k.defined()) {
      cache->k[layer].index_copy_(2, cache->slot, k);
      cache->v[layer].index_copy_(2, cache->slot, v);
    }
    k = cache->k[layer].narrow(2, 0, cache->span);
    v = cache->v[layer].narrow(2, 0, cache->span);
  } else if (cache) {
    const int64_t at = cache->len;
    if (k.defined()) {
      cache->k[layer].narrow(2, at, T).copy_(k);
      cache->v[layer].narrow(2, at, T).copy_(v);
    }
    k = cache->k[layer].narrow(2, 0, at + T);
    v = cache->v[layer].narrow(2, 0, at + T);
  }
  const int64_t S = k.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  if (T == 1 && x.is_cuda()) {
    // One fused split-K kernel reads each key/value row once for the whole query group
    // (cuda_ops.hpp); it declines what it does not cover (dtype, head size, layout).
    Tensor last = cache && cache->slot.defined() ? cache->slot : Tensor();
    Tensor out = fused_decode_attention(q, k, v, bias, scale, last);
    if (out.defined()) return out;
  }
  if (T == 1 && !x.is_cuda() && decode_kernels().cpu_attention) {
    Tensor out = cpu_decode_attention(q, k, v, bias, scale);  // declines what it does not cover
    if (out.defined()) return out;
  }
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  if (!bias.defined() && T > 1 && S == T) {
    // Causal attention over a whole sequence (training, a prefill from empty): libtorch's
    // fused kernel (flash on CUDA) never writes the [T, T] scores, forward or backward.
    Tensor out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scale,
                                                  /*enable_gqa=*/G > 1);
    return out.transpose(1, 2).reshape({B, T, heads * head_dim});
  }
#endif
  // Query heads grouped under their key/value head: [B, kv, G*T, d], so keys and values
  // are read once per group and never copied (decode is bound by this read).
  Tensor qg = q.reshape({B, kv_heads, G * T, head_dim});
  Tensor raw = torch::matmul(qg, k.transpose(-1, -2)).view({B, kv_heads, G, T, S});
  Tensor scores;
  if (bias.defined()) {
    scores = torch::add(bias.unsqueeze(2), raw, scale);  // fp32: bias + scale * q.k
  } else {
    Tensor causal = torch::ones({T, S}, torch::TensorOptions().dtype(torch::kBool).device(x.device()))
                        .triu(S - T + 1);
    scores = (raw.to(torch::kFloat32) * scale).masked_fill(causal, -std::numeric_limits<float>::infinity());
  }
  Tensor p = torch::softmax(scores, -1).to(x.scalar_type()).view({B, kv_heads, G * T, S});
  Tensor out = torch::matmul(p, v);  // [B, kv, G*T, d] = [B, h, T, d]
  out = T == 1 ? out.reshape({B, 1, heads * head_dim})
               : out.view({B, heads, T, head_dim}).transpose(1, 2).reshape({B, T, heads * head_dim});
  return out;
}

MLPImpl::MLPImpl(const ModelConfig& c, const torch::TensorOptions& o) {
  gate_proj = register_module("gate_proj", Linear(c.hidden_size, c.intermediate_size, c.mlp_bias, o));
  up_proj = register_module("up_proj", Linear(c.hidden_size, c.intermediate_size, c.mlp_bias, o));
  down_proj = register_module("down_proj", Linear(c.intermediate_size, c.hidden_size, c.mlp_bias, o));
}

// silu(gate) * up in training as one kernel forward and one backward (autograd's path:
// SiLU and a multiply on the split halves, three kernels back and a concatenation).
struct SwigluFunction : torch::autograd::Function<SwigluFunction> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor gu) {
    ctx->save_for_backward({gu});
    return ran(fused_swiglu(gu), "swiglu");
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return {ran(fused_swiglu_backward(ctx->get_saved_variables()[0], grads[0].contiguous()), "swiglu backward")};
  }
};

void MLPImpl::fuse() { fuse_linears({gate_proj, up_proj}, gate_up_weight, gate_up_bias); }

Tensor MLPImpl::forward(const Tensor& x) { return down_proj(activation(x)); }

Tensor MLPImpl::activation(const Tensor& x) {
  if (gate_up_weight.defined()) {
    auto shape = x.sizes().vec();
    shape.back() = gate_up_weight.size(0);
    Tensor rows = x.reshape({-1, x.size(-1)});
    Tensor gu = with_adapters(torch::linear(rows, gate_up_weight, gate_up_bias), rows, {gate_proj, up_proj})
                    .view(shape);
    if (decode_step(x)) {
      Tensor out = fused_swiglu(gu);
      if (out.defined()) return out;
    }
    const int64_t I = gu.size(-1) / 2;
    if (torch::GradMode::is_enabled() && training_kernels_cover(gu)) return SwigluFunction::apply(gu);
    if (torch::GradMode::is_enabled()) {
      auto halves = gu.split(I, -1);  // backward: one concatenation
      return torch::silu(halves[0]) * halves[1];
    }
    return torch::silu(gu.narrow(-1, 0, I)).mul_(gu.narrow(-1, I, I));
  }
  return torch::silu(gate_proj(x)) * up_proj(x);
}

BlockImpl::BlockImpl(const ModelConfig& c, const torch::TensorOptions& o) {
  input_layernorm = register_module("input_layernorm", RMSNorm(c.hidden_size, c.rms_eps, o));
  self_attn = register_module("self_attn", Attention(c, o));
  post_attention_layernorm =
      register_module("post_attention_layernorm", RMSNorm(c.hidden_size, c.rms_eps, o));
  mlp = register_module("mlp", MLP(c, o));
}

// residual + lin(a). In inference the residual stream is this block's own tensor, so the
// sum is accumulated into it by the GEMM (beta = 1): no separate add kernel.
static Tensor add_projection(Tensor residual, Linear& lin, const Tensor& a) {
  if (c10::InferenceMode::is_enabled() && !lin->bias.defined() &&
      !(lin->adapter && lin->adapter->enabled) && residual.is_contiguous()) {
    const int64_t H = residual.size(-1);
    residual.view({-1, H}).addmm_(a.reshape({-1, a.size(-1)}), lin->weight.t());
    return residual;
  }
  return residual + lin(a);
}

Tensor BlockImpl::forward(Tensor x, const Tensor& cos, const Tensor& sin, const Tensor& bias,
                          KVCache* cache, int layer) {
  Tensor heads = self_attn->attend(input_layernorm(x), cos, sin, bias, cache, layer);
  x = add_projection(x, self_attn->o_proj, heads);
  return add_projection(x, mlp->down_proj, mlp->activation(post_attention_layernorm(x)));
}

// ---- the model ----------------------------------------------------------------

TransformerImpl::TransformerImpl(const ModelConfig& c, const torch::TensorOptions& o)
    : cfg(c), opts(o) {
  embed_tokens = register_module("embed_tokens", Embedding(c.vocab_size, c.hidden_size, o));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t l = 0; l < c.num_layers; ++l) layers->push_back(Block(c, o));
  norm = register_module("norm", RMSNorm(c.hidden_size, c.rms_eps, o));
  if (!c.tie_embeddings)
    lm_head = register_module("lm_head", Linear(c.hidden_size, c.vocab_size, false, o));

  // inv_freq = theta^(-2i/d), computed in fp32 like transformers; Llama 3 stretches the
  // low frequencies and blends the middle band.
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  Tensor exps = torch::arange(0, c.head_dim, 2, torch::TensorOptions().dtype(torch::kInt64))
                    .to(torch::kFloat32) / static_cast<double>(c.head_dim);
  Tensor inv = 1.0 / torch::pow(torch::full({}, c.rope_theta, f32), exps);
  if (c.rope_factor > 0) {
    const double old = static_cast<double>(c.rope_original_max);
    const double low_wavelen = old / c.rope_low_freq, high_wavelen = old / c.rope_high_freq;
    Tensor wavelen = 2 * M_PI / inv;
    Tensor scaled = torch::where(wavelen > low_wavelen, inv / c.rope_factor, inv);
    Tensor smooth = (old / wavelen - c.rope_low_freq) / (c.rope_high_freq - c.rope_low_freq);
    Tensor blended = (1 - smooth) * scaled / c.rope_factor + smooth * scaled;
    Tensor medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
    inv = torch::where(medium, blended, scaled);
  }
  inv_freq = register_buffer("inv_freq", inv.to(o.device()));
}

std::pair<Tensor, Tensor> TransformerImpl::rope(const Tensor& pos) const {
  Tensor freqs = pos.to(torch::kFloat32).unsqueeze(-1) * inv_freq;  // [B,T,d/2]
  Tensor emb = torch::cat({freqs, freqs}, -1);
  auto dt = opts.dtype().toScalarType();
  Tensor s = freqs.sin();
  return {emb.cos().to(dt), torch::cat({-s, s}, -1).to(dt)};
}

// Gradient checkpointing: a block's activations are not kept for backward; backward runs
// the block again with the same random state (adapter dropout) and backpropagates through
// the recomputation, accumulating parameter gradients as it goes.
namespace {

struct CheckpointedBlock : torch::autograd::Function<CheckpointedBlock> {
  // libtorch 2 reads the device of every tensor input, so "no attention bias" travels as
  // an empty tensor rather than an undefined one.
  static Tensor wrap(const Tensor& bias, const Tensor& like) {
    return bias.defined() ? bias : torch::empty({0}, like.options());
  }
  static Tensor unwrap(const Tensor& bias) { return bias.numel() ? bias : Tensor(); }

  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, Tensor cos, Tensor sin,
                        Tensor bias, int64_t block, int64_t layer) {
    ctx->save_for_backward({x, cos, sin, bias});
    ctx->saved_data["block"] = block;
    ctx->saved_data["layer"] = layer;
    auto gen = at::globalContext().defaultGenerator(x.device());
    ctx->saved_data["rng"] = gen.get_state();
    torch::NoGradGuard no_grad;
    return reinterpret_cast<BlockImpl*>(block)->forward(x, cos, sin, unwrap(bias), nullptr,
                                                         static_cast<int>(layer));
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    auto* block = reinterpret_cast<BlockImpl*>(ctx->saved_data["block"].toInt());
    auto gen = at::globalContext().defaultGenerator(saved[0].device());
    Tensor now = gen.get_state();
    gen.set_state(ctx->saved_data["rng"].toTensor());
    Tensor x = saved[0].detach().requires_grad_(true);
    Tensor y;
    {
      torch::AutoGradMode enable(true);
      y = block->forward(x, saved[1], saved[2], unwrap(saved[3]), nullptr,
                         static_cast<int>(ctx->saved_data["layer"].toInt()));
    }
    gen.set_state(now);
    torch::autograd::backward({y}, {grads[0]});
    return {x.grad(), Tensor(), Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

Tensor TransformerImpl::hidden(const Tensor& ids, const Tensor& pos, const Tensor& bias,
                               KVCache* cache) {
  Tensor x = F::embedding(ids, embed_tokens->weight);
  auto [cos, sin] = rope(pos);
  bool recompute = grad_checkpoint && !cache && is_training() && torch::GradMode::is_enabled();
  // A checkpointed block is only part of the graph if its input is (the block's own
  // weights are not inputs of the function): with frozen embeddings, make it so.
  if (recompute && !x.requires_grad()) x = x.detach().requires_grad_(true);
  for (size_t l = 0; l < layers->size(); ++l) {
    auto* block = layers[l]->as<BlockImpl>();
    bool again = recompute && (grad_checkpoint_layers == 0 || static_cast<int64_t>(l) < grad_checkpoint_layers);
    if (again)
      x = CheckpointedBlock::apply(x, cos, sin, CheckpointedBlock::wrap(bias, x),
                                   reinterpret_cast<int64_t>(block), static_cast<int64_t>(l));
    else
      x = block->forward(x, cos, sin, bias, cache, static_cast<int>(l));
  }
  return norm(x);
}

Tensor TransformerImpl::logits(const Tensor& h) {
  if (!lm_head) return torch::linear(h, output_weight());
  Tensor out = lm_head(h);  // its forward, so that an adapter on it takes part
  return output_vocab > 0 ? out.narrow(-1, 0, output_vocab).contiguous() : out;
}

Tensor TransformerImpl::output_weight() const {
  const Tensor& w = lm_head ? lm_head->weight : embed_tokens->weight;
  return output_vocab > 0 ? w.narrow(0, 0, output_vocab) : w;
}

Tensor TransformerImpl::forward(const Tensor& ids, const Tensor& mask) {
  return logits(forward_hidden(ids, mask));
}

Tensor TransformerImpl::forward_hidden(const Tensor& ids, const Tensor& mask) {
  const int64_t B = ids.size(0), T = ids.size(1);
  auto dev = ids.device();
  if (!mask.defined()) {
    Tensor pos = torch::arange(T, torch::TensorOptions().dtype(torch::kInt64).device(dev))
                     .unsqueeze(0).expand({B, T});
    return hidden(ids, pos, {}, nullptr);
  }
  Tensor m = mask.to(dev).to(torch::kBool);
  // Right padding (real tokens, then padding, in every row) needs no mask beyond
  // causality: no real token sees a later one. Training batches are built so.
  if (T < 2 || !m.narrow(1, 1, T - 1).logical_and(m.narrow(1, 0, T - 1).logical_not()).any().item<bool>())
    return forward_hidden(ids);
  Tensor pos = (m.to(torch::kInt64).cumsum(1) - 1).clamp_min(0);
  // A query sees earlier real tokens; a padding query sees itself so its row stays finite.
  Tensor causal = torch::ones({T, T}, torch::TensorOptions().dtype(torch::kBool).device(dev)).tril();
  Tensor allowed = causal.unsqueeze(0).logical_and(m.unsqueeze(1));  // [B,T,T]
  allowed = allowed.logical_or(torch::eye(T, torch::TensorOptions().dtype(torch::kBool).device(dev)));
  Tensor bias = torch::zeros({B, 1, T, T}, torch::TensorOptions().dtype(torch::kFloat32).device(dev))
                    .masked_fill(allowed.logical_not().unsqueeze(1),
                                 -std::numeric_limits<float>::infinity());
  return hidden(ids, pos, bias, nullptr);
}

// ---- weights --------------------------------------------------------------------

static std::string shape_str(c10::IntArrayRef s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

static torch::Dtype torch_dtype(const TensorView& v) {
  switch (v.dtype) {
    case DType::F32: return torch::kFloat32;
    case DType::F16: return torch::kFloat16;
    case DType::BF16: return torch::kBFloat16;
    case DType::F64: return torch::kFloat64;
    default:
      throw LoadError(v.file + ": tensor '" + v.name + "' has dtype " + dtype_name(v.dtype) +
                      "; weights must be F32, F16 or BF16");
  }
}

void TransformerImpl::load(std::shared_ptr<Checkpoint> ckpt) {
  torch::NoGradGuard no_grad;
  bool in_place = false;
  for (auto& item : named_parameters(true)) {
    const std::string& name = item.key();
    Tensor& p = item.value();
    const std::string hf = name.rfind("lm_head", 0) == 0 ? name : "model." + name;
    const TensorView& v = ckpt->get(hf);
    if (!c10::IntArrayRef(v.shape).equals(p.sizes()))
      throw LoadError(v.file + ": shape mismatch for tensor '" + hf + "': the file has " +
                      shape_str(v.shape) + ", the config implies " + shape_str(p.sizes()));
    auto dt = torch_dtype(v);
    Tensor src = torch::from_blob(const_cast<void*>(v.data), v.shape,
                                  torch::TensorOptions().dtype(dt));
    if (p.device().is_cpu() && dt == p.scalar_type()) {
      p.set_data(src);  // the mapping is the weight: no copy at all
      in_place = true;
    } else {
      p.copy_(src);
    }
  }
  if (in_place) mapped = ckpt;
}

void TransformerImpl::fuse() {
  for (auto& l : *layers) {
    auto* b = l->as<BlockImpl>();
    b->self_attn->fuse();
    b->mlp->fuse();
  }
}

void TransformerImpl::unfuse() {
  for (auto& l : *layers) {
    auto* b = l->as<BlockImpl>();
    b->self_attn->qkv_weight = b->self_attn->qkv_bias = Tensor();
    b->mlp->gate_up_weight = b->mlp->gate_up_bias = Tensor();
  }
}

void TransformerImpl::init_random(uint64_t seed, double std) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (auto& item : named_parameters(true)) {
    const std::string& n = item.key();
    Tensor& p = item.value();
    if (n.find("norm") != std::string::npos) p.fill_(1.0);
    else if (n.size() >= 4 && n.compare(n.size() - 4, 4, "bias") == 0) p.zero_();
    else p.normal_(0.0, std);
  }
}

torch::Dtype parse_dtype(const std::string& s) {
  if (s == "fp32" || s == "float32") return torch::kFloat32;
  if (s == "bf16" || s == "bfloat16") return torch::kBFloat16;
  if (s == "fp16" || s == "float16") return torch::kFloat16;
  throw LoadError("dtype '" + s + "' is not one of fp32, bf16, fp16");
}

torch::Device parse_device(const std::string& s) {
  if (s == "cpu") return torch::Device(torch::kCPU);
  if (s == "cuda" || s.rfind("cuda:", 0) == 0) {
    if (!torch::cuda::is_available())
      throw LoadError("device '" + s + "': this build of libtorch has no CUDA device available");
    int64_t index = 0;
    if (s.size() > 5) {
      try {
        size_t used = 0;
        index = std::stoll(s.substr(5), &used);
        if (used != s.size() - 5) throw std::invalid_argument(s);
      } catch (const std::exception&) {
        throw LoadError("device '" + s + "': expected cuda:N");
      }
    }
    if (index < 0 || index >= static_cast<int64_t>(torch::cuda::device_count()))
      throw LoadError("device '" + s + "': only " + std::to_string(torch::cuda::device_count()) +
                      " CUDA device(s) present");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw LoadError("device '" + s + "' is not one of cpu, cuda, cuda:N");
}

Transformer load_transformer(const std::filesystem::path& dir, const torch::Device& device,
                             torch::Dtype dtype) {
  ModelConfig cfg = load_config(dir);
  auto ckpt = std::make_shared<Checkpoint>(dir);
  Transformer model(cfg, torch::TensorOptions().dtype(dtype).device(device));
  model->load(ckpt);
  model->fuse();
  model->eval();
  return model;
}

}  // namespace policy
