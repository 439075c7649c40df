// A Qwen2/Llama-family decoder in libtorch, written to be read top to bottom:
// embeddings -> N x (RMSNorm, attention with RoPE and GQA, residual, RMSNorm, SwiGLU MLP,
// residual) -> RMSNorm -> lm_head. Parameter names follow Hugging Face's (without the
// leading "model."), and every projection is its own Linear module so that LoRA can wrap
// or replace it.
#pragma once

#include <torch/torch.h>

#include <filesystem>
#include <memory>

#include "policy/config.hpp"

namespace policy {

class Checkpoint;

// A trainable addition to a projection's output, e.g. LoRA (engine/train/lora.hpp).
struct Adapter {
  virtual ~Adapter() = default;
  // y + the adapter's term for input x, both [rows, features]. y is the projection's own
  // fresh output, saved by no other op, so the adapter may add into it in place.
  virtual torch::Tensor add_to(torch::Tensor y, const torch::Tensor& x) = 0;
  // The same for projections fused into one GEMM that read the same x (q, k, v; gate, up):
  // y [rows, sum of outs] gets the terms of `group` (this adapter among them, in column
  // order) at once. Undefined when this kind of adapter cannot join the group: the caller
  // then adds each term to its own columns.
  virtual torch::Tensor add_group_to(torch::Tensor y, const torch::Tensor& x,
                                     const std::vector<Adapter*>& group) {
    (void)y, (void)x, (void)group;
    return {};
  }
  bool enabled = true;  // off: the base projection alone (the reference policy)
};

// y = x W^T + b (+ the adapter's delta). A module of its own so adapters can find and
// wrap each projection.
struct LinearImpl : torch::nn::Module {
  LinearImpl(int64_t in, int64_t out, bool bias, const torch::TensorOptions& opts);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  std::shared_ptr<Adapter> adapter;
};
TORCH_MODULE(Linear);

struct EmbeddingImpl : torch::nn::Module {
  EmbeddingImpl(int64_t n, int64_t dim, const torch::TensorOptions& opts);
  torch::Tensor weight;  // [n, dim]
};
TORCH_MODULE(Embedding);

struct RMSNormImpl : torch::nn::Module {
  RMSNormImpl(int64_t dim, double eps, const torch::TensorOptions& opts);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(RMSNorm);

// Keys and values of every layer for a batch of sequences: [B, kv_heads, capacity, head_dim].
struct KVCache {
  std::vector<torch::Tensor> k, v;
  int64_t len = 0;  // columns filled so far (shared by all rows; padding is masked)
  // For recorded (graphed) decode steps, where the column cannot be a C++ number: when
  // slot ([1] int64 on the device) is set, keys/values go to column slot and attention
  // spans the first `span` columns (the bias masks those not yet written).
  torch::Tensor slot;
  int64_t span = 0;
  void allocate(const ModelConfig& c, int64_t batch, int64_t capacity,
                const torch::TensorOptions& opts);
  // Keeps the given rows (e.g. unfinished sequences, or a prompt repeated n times).
  void select_rows(const torch::Tensor& rows);
};

struct AttentionImpl : torch::nn::Module {
  AttentionImpl(const ModelConfig& c, const torch::TensorOptions& opts);
  // x [B,T,H]; cos/sin [B,T,head_dim]; bias additive [B,1,T,S] fp32 or undefined (causal).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& bias, KVCache* cache, int layer);
  // The same without the output projection: the heads' outputs [B,T,heads*head_dim].
  torch::Tensor attend(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                       const torch::Tensor& bias, KVCache* cache, int layer);
  Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  int64_t heads, kv_heads, head_dim;
  // q, k and v as one projection (one GEMM instead of three): the three modules' weights
  // become views of qkv_weight, so an update of either is seen by both. Undefined = apart.
  torch::Tensor qkv_weight, qkv_bias;
  void fuse();
};
TORCH_MODULE(Attention);

struct MLPImpl : torch::nn::Module {
  MLPImpl(const ModelConfig& c, const torch::TensorOptions& opts);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor activation(const torch::Tensor& x);  // silu(gate) * up: down_proj's input
  Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
  torch::Tensor gate_up_weight, gate_up_bias;  // as AttentionImpl::qkv_weight
  void fuse();
};
TORCH_MODULE(MLP);

struct BlockImpl : torch::nn::Module {
  BlockImpl(const ModelConfig& c, const torch::TensorOptions& opts);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& bias, KVCache* cache, int layer);
  RMSNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  Attention self_attn{nullptr};
  MLP mlp{nullptr};
};
TORCH_MODULE(Block);

struct TransformerImpl : torch::nn::Module {
  TransformerImpl(const ModelConfig& c, const torch::TensorOptions& opts);

  // Training and scoring: logits [B,T,V] for a right- or left-padded batch; mask [B,T] is
  // 1 on real tokens (positions count real tokens only). mask may be undefined. A
  // right-padded batch runs as one without a mask (fused causal attention where libtorch
  // has it); the outputs at its padding positions are then not those of a masked run.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask = {});
  // The same, stopping before the output projection: final hidden states [B,T,H], so a
  // trainer can project only the positions it scores.
  torch::Tensor forward_hidden(const torch::Tensor& ids, const torch::Tensor& mask = {});

  // The building block of generation: runs ids [B,T] at positions pos [B,T] with the
  // additive attention bias [B,1,T,S] (fp32, 0 or -inf; S = cache->len + T), appending
  // keys/values to the cache at column cache->len (the caller advances len). Returns the
  // final hidden states [B,T,H] (after the last norm).
  torch::Tensor hidden(const torch::Tensor& ids, const torch::Tensor& pos,
                       const torch::Tensor& bias, KVCache* cache);
  // Logits over the first output_vocab ids (all of them when 0).
  torch::Tensor logits(const torch::Tensor& hidden);
  // The output projection's weight [V', H], narrowed like the logits.
  torch::Tensor output_weight() const;

  // Rotary cos and sin [B,T,head_dim] in the model's dtype for positions [B,T]; the first
  // half of sin is negated (rotate_half's sign, see apply_rope in model.cpp).
  std::pair<torch::Tensor, torch::Tensor> rope(const torch::Tensor& pos) const;

  // Weights from a checkpoint (dtype converted, copied to the device; used in place when
  // both already match, which keeps the mapping alive).
  void load(std::shared_ptr<Checkpoint> ckpt);
  // Runs q/k/v and gate/up as single GEMMs (weights become views; see AttentionImpl).
  // Wrapping a projection (LoRA) needs unfuse() first so each module's forward is used.
  void fuse();
  void unfuse();
  // Random weights like transformers' init (normal(0, std), norms 1, biases 0): benchmarks.
  void init_random(uint64_t seed, double std = 0.02);

  ModelConfig cfg;
  torch::TensorOptions opts;
  Embedding embed_tokens{nullptr};  // [V,H]; the output projection when tied
  torch::nn::ModuleList layers;
  RMSNorm norm{nullptr};
  Linear lm_head{nullptr};     // null when the embeddings are tied
  // Ids the tokenizer knows, when fewer than cfg.vocab_size (0: all): the rows beyond are
  // padding that no text can hold, and sampling one would end the completion in an error.
  int64_t output_vocab = 0;
  torch::Tensor inv_freq;      // [head_dim/2] fp32, on the device
  std::shared_ptr<Checkpoint> mapped;  // keeps in-place weights valid
  // Training: recompute each block in backward instead of keeping its activations.
  bool grad_checkpoint = false;
  int64_t grad_checkpoint_layers = 0;  // only the first N blocks recomputed (0: all)
};
TORCH_MODULE(Transformer);

// "fp32" | "bf16" | "fp16" (also "float32", "bfloat16", "float16") -> torch dtype.
torch::Dtype parse_dtype(const std::string& name);
// "cpu" | "cuda" | "cuda:N"; a clear error when CUDA is absent or N is out of range.
torch::Device parse_device(const std::string& name);

// Builds the model of a checkpoint directory on a device in a dtype.
Transformer load_transformer(const std::filesystem::path& dir, const torch::Device& device,
                             torch::Dtype dtype);

}  // namespace policy
