#include "train/objective.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace train {

LossType loss_type_from(const std::string& name) {
  if (name == "grpo") return LossType::grpo;
  if (name == "bnpo") return LossType::bnpo;
  if (name == "dr_grpo") return LossType::dr_grpo;
  if (name == "dapo") return LossType::dapo;
  throw std::invalid_argument("unknown loss '" + name + "' (grpo, bnpo, dr_grpo, dapo)");
}

Importance importance_from(const std::string& name) {
  if (name == "token") return Importance::token;
  if (name == "sequence") return Importance::sequence;
  throw std::invalid_argument("unknown importance level '" + name + "' (token, sequence)");
}

ObjectiveTerms grpo_objective(const at::Tensor& logp, const at::Tensor& old_logp,
                              const std::optional<at::Tensor>& ref_logp,
                              const at::Tensor& advantages, const at::Tensor& mask,
                              const ObjectiveOptions& opts, double dapo_tokens) {
  if (logp.dim() != 2 || logp.sizes() != old_logp.sizes() || logp.sizes() != mask.sizes())
    throw std::invalid_argument("grpo: logp, old_logp and mask must share one [B, T] shape");
  if (advantages.dim() != 1 || advantages.size(0) != logp.size(0))
    throw std::invalid_argument("grpo: one advantage per completion is needed");
  if (opts.beta != 0 && !ref_logp)
    throw std::invalid_argument("grpo: beta > 0 needs reference log-probabilities");

  at::Tensor m = mask.to(logp.scalar_type());
  at::Tensor log_ratio = logp - old_logp.detach();
  at::Tensor log_weight;
  if (opts.importance == Importance::token) {
    log_weight = log_ratio;
  } else {  // GSPO: one ratio per sequence, the geometric mean of its token ratios
    at::Tensor per_seq = (log_ratio * m).sum(-1) / m.sum(-1).clamp_min(1.0);
    log_weight = per_seq.unsqueeze(-1).expand_as(log_ratio);
  }
  double low = 1.0 - opts.clip, high = 1.0 + opts.clip_high.value_or(opts.clip);
  at::Tensor ratio = log_weight.exp();
  at::Tensor clipped = ratio.clamp(low, high);
  at::Tensor adv = advantages.to(logp.scalar_type()).unsqueeze(-1);
  at::Tensor per_token = -at::min(ratio * adv, clipped * adv);

  ObjectiveTerms out;
  at::Tensor counted = m.sum();
  out.tokens = counted.item<double>();
  double denom = std::max(out.tokens, 1.0);
  if (opts.beta != 0) {
    at::Tensor d = ref_logp->detach() - logp;
    at::Tensor kl = d.exp() - d - 1.0;  // k3: unbiased and never negative
    per_token = per_token + opts.beta * kl;
    out.kl = ((kl * m).sum() / denom).item<double>();
  }

  at::Tensor masked = per_token * m;
  switch (opts.loss) {
    case LossType::grpo:
      out.loss = (masked.sum(-1) / m.sum(-1).clamp_min(1.0)).mean();
      break;
    case LossType::bnpo:
      out.loss = masked.sum() / counted.clamp_min(1.0);
      break;
    case LossType::dr_grpo: {
      int64_t L = opts.max_completion_length > 0 ? opts.max_completion_length : logp.size(1);
      out.loss = masked.sum() / static_cast<double>(logp.size(0) * L);
      break;
    }
    case LossType::dapo:
      out.loss = masked.sum() / std::max(dapo_tokens > 0 ? dapo_tokens : out.tokens, 1.0);
      break;
  }

  at::NoGradGuard no_grad;
  at::Tensor r = ratio.detach();
  at::Tensor a = adv.detach().expand_as(r);
  out.clip_low = (((r < low) & (a < 0)).to(m.scalar_type()) * m).sum().item<double>() / denom;
  out.clip_high = (((r > high) & (a > 0)).to(m.scalar_type()) * m).sum().item<double>() / denom;
  return out;
}

at::Tensor sft_objective(const at::Tensor& logp, const at::Tensor& mask) {
  if (logp.sizes() != mask.sizes())
    throw std::invalid_argument("sft: logp and mask must share one [B, T] shape");
  at::Tensor m = mask.to(logp.scalar_type());
  return -(logp * m).sum() / m.sum().clamp_min(1.0);
}

}  // namespace train
