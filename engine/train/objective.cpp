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

RewardScaling reward_scaling_from(const std::string& name) {
  if (name == "group") return RewardScaling::group;
  if (name == "batch") return RewardScaling::batch;
  if (name == "none") return RewardScaling::none;
  throw std::invalid_argument("unknown reward scaling '" + name + "' (group, batch, none)");
}

Baseline baseline_from(const std::string& name) {
  if (name == "mean") return Baseline::group_mean;
  if (name == "leave_one_out") return Baseline::leave_one_out;
  throw std::invalid_argument("unknown baseline '" + name + "' (mean, leave_one_out)");
}

Importance importance_from(const std::string& name) {
  if (name == "token") return Importance::token;
  if (name == "sequence") return Importance::sequence;
  throw std::invalid_argument("unknown importance level '" + name + "' (token, sequence)");
}

static double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Unbiased, as torch.std; a single value has no spread.
static double std_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double m = mean_of(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

Advantages compute_advantages(const std::vector<std::vector<double>>& group_rewards,
                              RewardScaling scaling, double eps, Baseline baseline) {
  Advantages out;
  std::vector<double> all;
  for (const auto& g : group_rewards) all.insert(all.end(), g.begin(), g.end());
  out.reward_mean = mean_of(all);
  out.reward_std = std_of(all);
  for (size_t k = 0; k < group_rewards.size(); ++k) {
    const auto& g = group_rewards[k];
    if (g.empty()) throw std::invalid_argument("a group has no completions");
    for (size_t i = 0; i < g.size(); ++i)
      if (!std::isfinite(g[i]))
        throw std::invalid_argument("groups[" + std::to_string(k + 1) + "][" + std::to_string(i + 1) +
                                    "]: the reward is not a finite number");
    double m = mean_of(g), s = std_of(g);
    bool flat = std::all_of(g.begin(), g.end(), [&](double r) { return r == g.front(); });
    if (flat) ++out.zero_variance_groups;
    double scale = scaling == RewardScaling::group   ? s + eps
                   : scaling == RewardScaling::batch ? out.reward_std + eps
                                                     : 1.0;
    if (baseline == Baseline::group_mean) {
      for (double r : g) out.values.push_back(flat ? 0.0 : (r - m) / scale);
      continue;
    }
    const double sum = std::accumulate(g.begin(), g.end(), 0.0), others = static_cast<double>(g.size() - 1);
    for (double r : g) out.values.push_back((g.size() > 1 ? r - (sum - r) / others : 0.0) / scale);
  }
  return out;
}

Advantages given_advantages(const std::vector<std::vector<double>>& group_rewards,
                            const std::vector<std::vector<double>>& group_advantages) {
  if (group_rewards.size() != group_advantages.size())
    throw std::invalid_argument("grpo: advantages for " + std::to_string(group_advantages.size()) +
                                " groups but rewards for " + std::to_string(group_rewards.size()));
  Advantages out = compute_advantages(group_rewards, RewardScaling::none);
  out.values.clear();
  out.zero_variance_groups = 0;
  for (size_t g = 0; g < group_advantages.size(); ++g) {
    const auto& a = group_advantages[g];
    if (a.size() != group_rewards[g].size())
      throw std::invalid_argument("grpo: group " + std::to_string(g + 1) + " has " +
                                  std::to_string(a.size()) + " advantages for " +
                                  std::to_string(group_rewards[g].size()) + " completions");
    for (double x : a)
      if (!std::isfinite(x))
        throw std::invalid_argument("grpo: group " + std::to_string(g + 1) + " has an advantage that is not finite");
    if (std::all_of(a.begin(), a.end(), [](double x) { return x == 0.0; })) ++out.zero_variance_groups;
    out.values.insert(out.values.end(), a.begin(), a.end());
  }
  return out;
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
