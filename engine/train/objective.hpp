// The policy-gradient objectives on log-probability tensors: GRPO (the paper's Eq. 1 and
// 2) and the variants the field uses (TRL's GRPO trainer names them): loss normalisation
// grpo / bnpo / dr_grpo / dapo, an asymmetric upper clip (DAPO), sequence-level
// importance ratios (GSPO), reward scaling by group std, batch std or none (Dr. GRPO).
//
// Shapes: B completions of up to T tokens. `mask` is 1 for completion tokens that count,
// 0 for padding (and for every token of a masked truncated completion).
#pragma once

#include <ATen/ATen.h>

#include "train/advantages.hpp"

#include <optional>
#include <string>
#include <vector>

namespace train {

enum class LossType { grpo, bnpo, dr_grpo, dapo };
enum class Importance { token, sequence };

LossType loss_type_from(const std::string& name);          // throws on unknown names
Importance importance_from(const std::string& name);

struct ObjectiveOptions {
  double beta = 0.0;                 // KL coefficient; 0 means no reference model at all
  double clip = 0.2;                 // delta: the lower clip, and the upper one unless clip_high
  std::optional<double> clip_high;   // DAPO's epsilon_high (0.28)
  LossType loss = LossType::grpo;
  Importance importance = Importance::token;
  int64_t max_completion_length = 0;  // dr_grpo's constant (tokens per completion)
};

struct ObjectiveTerms {
  at::Tensor loss;       // scalar, to minimise
  double kl = 0;         // mean per-token KL(pi_theta || pi_ref) over counted tokens (k3)
  double clip_low = 0;   // fraction of counted tokens clipped at 1 - clip with A < 0
  double clip_high = 0;  // fraction clipped at 1 + clip_high with A > 0
  double tokens = 0;     // counted tokens
};

// logp: log pi_theta of the sampled tokens [B, T] (with gradient); old_logp: log pi_old
// (the sampling policy) [B, T]; ref_logp: log pi_ref [B, T], required when beta > 0;
// advantages [B]; mask [B, T]. `dapo_tokens` is the number of counted tokens in the whole
// accumulated batch (dapo only: micro-batches share one normaliser).
ObjectiveTerms grpo_objective(const at::Tensor& logp, const at::Tensor& old_logp,
                              const std::optional<at::Tensor>& ref_logp,
                              const at::Tensor& advantages, const at::Tensor& mask,
                              const ObjectiveOptions& opts, double dapo_tokens = 0);

// Mean next-token cross-entropy over counted tokens (SFT): logp [B, T] of the target
// tokens, mask [B, T] zero on prompt tokens and padding.
at::Tensor sft_objective(const at::Tensor& logp, const at::Tensor& mask);

}  // namespace train
