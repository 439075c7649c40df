// LoRA (Hu et al., 2021): each targeted projection y = x W^T + b gains a trainable
// low-rank term (alpha / r) * dropout(x) A^T B^T, with A [r, in] and B [out, r]; B starts
// at zero, so training starts from the base model exactly. Turning the adapters off gives
// the base model back, which is the reference policy of the KL term at no memory cost.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/model.hpp"
#include "train/trainer.hpp"

namespace train {

// r, alpha, dropout and target projections: the trainer's settings (trainer.hpp).
using LoraOptions = LoraSettings;

class LoraAdapter : public policy::Adapter {
 public:
  LoraAdapter(int64_t in, int64_t out, const LoraOptions& o, const torch::TensorOptions& t);
  torch::Tensor add_to(torch::Tensor y, const torch::Tensor& x) override;
  // Adapters of one scale, dropout and mode: x dropped out once (the group shares the
  // mask), one GEMM by their A's stacked, one by their B's block-diagonal.
  torch::Tensor add_group_to(torch::Tensor y, const torch::Tensor& x,
                             const std::vector<policy::Adapter*>& group) override;
  std::vector<torch::Tensor> parameters() const { return {A, B}; }
  torch::Tensor A, B;  // [r, in], [out, r]
  double scale, dropout;
  bool training = false;  // dropout only inside a trainer's pass, never when sampling

 private:
  torch::Tensor dropped(const torch::Tensor& x) const;
};

class Lora {
 public:
  // Attaches an adapter to every projection whose name is in opts.targets and freezes
  // the base weights. Throws if no projection matches.
  Lora(policy::Transformer model, LoraOptions opts, uint64_t seed);
  ~Lora();  // detaches the adapters
  Lora(const Lora&) = delete;
  Lora& operator=(const Lora&) = delete;

  std::vector<torch::Tensor> parameters() const;
  void set_enabled(bool on);
  void set_training(bool on);  // dropout on or off
  const LoraOptions& options() const { return opts_; }

  // Tensors under PEFT's names ("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight").
  std::vector<std::pair<std::string, torch::Tensor>> named_tensors() const;
  // W + (alpha / r) B A for every adapted projection, keyed by the model's parameter name
  // ("layers.0.self_attn.q_proj.weight"): the adapters merged, for export.
  std::vector<std::pair<std::string, torch::Tensor>> merged_weights() const;
  // Copies tensors saved under those names back; throws naming a missing or misshapen one.
  void load(const std::vector<std::pair<std::string, torch::Tensor>>& tensors);

 private:
  policy::Transformer model_;
  LoraOptions opts_;
  struct Site {
    std::string name;  // "model.layers.0.self_attn.q_proj"
    policy::Linear linear;
    std::shared_ptr<LoraAdapter> adapter;
  };
  std::vector<Site> sites_;
};

}  // namespace train
