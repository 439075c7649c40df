// Inside engine/train only: a trainer's checkpoint and its Hugging Face / peft exports,
// written and read from the parts of a trainer they concern.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "policy/model.hpp"

namespace train {

class Lora;

// What a checkpoint holds of a trainer: the model (or its LoRA adapters) and the
// optimizer; base_dir is the policy's checkpoint directory (config, tokenizer).
struct TrainedParts {
  policy::Transformer model;
  Lora* lora = nullptr;  // null: full fine-tuning
  torch::optim::AdamW* optim = nullptr;
  std::string base_dir;
};

// The trainer's counters beside the weights (trainer.json).
struct SavedState {
  std::string kind;  // "grpo" or "sft"
  int64_t step = 0;
  std::optional<double> lr;
};

// dir/weights.safetensors, dir/optimizer.pt, dir/trainer.json.
void save_checkpoint(const std::filesystem::path& dir, const TrainedParts& p, const SavedState& s);
// Loads into `p`; throws naming the directory when it holds another kind of trainer's
// state, another kind of weights, or something unreadable.
SavedState load_checkpoint(const std::filesystem::path& dir, const TrainedParts& p, const std::string& kind);
// Full weights with the adapters merged (loads without peft), or the adapters alone with
// a peft adapter_config.json; dtype "" keeps the trained one, else fp32, bf16 or fp16.
void export_hf(const std::filesystem::path& dir, const TrainedParts& p, bool adapter_only,
               const std::string& dtype);

}  // namespace train
