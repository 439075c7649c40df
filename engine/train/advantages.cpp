#include "train/advantages.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace train {

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

}  // namespace train
