// Updates of a policy: GRPO (the paper's Eq. 1 and 2, with the variants of objective.hpp)
// and SFT (next-token cross-entropy on completions), full fine-tuning or LoRA, AdamW,
// gradient accumulation over micro-batches, gradient clipping, and checkpoints that
// resume a run exactly. Free of torch, so the Lua host binds it cheaply.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace dist {
class Group;
}

namespace train {

struct TrainedParts;  // checkpoint.hpp

struct LoraSettings {
  int64_t r = 32;
  double alpha = 64;
  double dropout = 0.1;
  std::vector<std::string> targets = {"q_proj", "k_proj", "v_proj", "o_proj",
                                      "gate_proj", "up_proj", "down_proj"};
};

struct UpdateOptions {
  double lr = 5e-7;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
  double max_grad_norm = 1.0;  // 0: no clipping
  int micro_batch = 8;         // sequences per forward/backward; gradients accumulate
  // SFT: instead of micro_batch rows each, rows sorted by length and cut where a
  // micro-batch would hold more than this many tokens with its padding (0: off). The
  // step's gradient is the same (a token-weighted sum); far less padding is computed.
  int64_t micro_tokens = 0;
  // With micro_tokens: the cuts that compute the fewest padded tokens (micro_batches.hpp)
  // instead of filling each micro-batch to the budget in order.
  bool least_padding = false;
  bool tf32 = false;  // CUDA float32 matrix products in TensorFloat-32 in forward and backward
  bool grad_checkpoint = false;  // recompute each block in backward instead of storing it
  // With grad_checkpoint, recompute only the first N blocks and keep the rest's
  // activations (0: all): recomputation traded for memory, block by block.
  int grad_checkpoint_layers = 0;
  std::optional<LoraSettings> lora;  // absent: full fine-tuning
  uint64_t seed = 0;           // adapter initialisation and dropout
};

struct GrpoOptions : UpdateOptions {
  double beta = 0.0;           // KL coefficient; 0 loads no reference
  double clip = 0.2;
  std::optional<double> clip_high;
  std::string loss = "grpo";            // grpo, bnpo, dr_grpo, dapo
  std::string scale_rewards = "group";  // group, batch, none
  std::string importance = "token";     // token, sequence
  int num_iterations = 1;      // optimisation passes over one batch
  bool mask_truncated = false;  // completions that hit max_tokens count no tokens
  double temperature = 1.0;    // the sampling temperature (log-probs are taken under it)
  int max_completion_length = 0;  // dr_grpo's constant; 0: the longest completion
  double adv_eps = 1e-4;
};

// One prompt and its G completions with their rewards.
struct Group {
  std::vector<int> prompt;
  std::vector<policy::Completion> completions;
  std::vector<double> rewards;
  // Given by the caller, one per completion, and used verbatim (multi-turn episodes: a
  // return against a leave-one-out baseline over other prompts' episodes, which no
  // statistic of this group can form). Every group of a step gives them or none does.
  std::optional<std::vector<double>> advantages;
};

struct StepStats {
  double loss = 0, reward_mean = 0, reward_std = 0, kl = 0;
  double clip_fraction = 0, clip_low = 0, clip_high = 0;
  double grad_norm = 0, lr = 0, seconds = 0;
  int64_t tokens = 0, sequences = 0, groups = 0, zero_variance_groups = 0;
  int64_t step = 0;  // optimizer steps taken so far
};

struct Example {  // SFT: learn the completion given the prompt
  std::vector<int> prompt, completion;
};

class Trainer {
 public:
  static std::unique_ptr<Trainer> grpo(std::shared_ptr<policy::Policy> pol, const GrpoOptions& o);
  static std::unique_ptr<Trainer> sft(std::shared_ptr<policy::Policy> pol, const UpdateOptions& o);
  ~Trainer();

  StepStats step(const std::vector<Group>& groups);     // GRPO trainers
  StepStats step(const std::vector<Example>& examples);  // SFT trainers
  // One pass of a GRPO step without the optimizer update: the loss and statistics, with
  // the gradients left on the parameters (tests and tooling inspect them).
  StepStats gradients(const std::vector<Group>& groups);
  StepStats gradients(const std::vector<Example>& examples);

  // Policy weights (or adapters), optimizer state and counters: enough to resume exactly.
  void save(const std::filesystem::path& dir) const;
  void load(const std::filesystem::path& dir);
  // A Hugging Face checkpoint of the trained model (config, tokenizer files, safetensors),
  // or, with LoRA and adapter_only, the adapter in PEFT's layout.
  // dtype ("fp32", "bf16", "fp16"; empty: the weights' own) is what the file stores.
  void export_hf(const std::filesystem::path& dir, bool adapter_only,
                 const std::string& dtype = "") const;

  // The learning rate of the following steps (schedules are the caller's: warm-up, decay).
  void set_lr(double lr);

  // Data parallel: this trainer becomes one of the group's replicas. Every replica is
  // given the same steps; each runs its share of the micro-batches (every size-th, from
  // its rank) and the ranks sum their gradients, so all take the same update as one
  // trainer given the whole step. Joining copies rank 0's trainable weights to all.
  void join(std::shared_ptr<dist::Group> group);

  int64_t steps() const;
  bool is_grpo() const;

  struct Impl;

 private:
  explicit Trainer(std::unique_ptr<Impl> impl);
  TrainedParts parts() const;  // what checkpoints and exports read and write
  std::unique_ptr<Impl> impl_;
};

}  // namespace train
