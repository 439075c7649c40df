// Advantages from rewards, one per completion, for the GRPO update and for scripts
// (train.advantages): group-relative with a choice of baseline and scaling, or given by
// the caller and checked. Free of torch, so the Lua host includes it cheaply.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace train {

enum class RewardScaling { group, batch, none };
RewardScaling reward_scaling_from(const std::string& name);  // throws on unknown names

// Group-relative advantages, one per completion: (R - mean_group) / (std + eps), where std
// is the group's (group), the whole batch's (batch), or 1 (none). std is the unbiased
// estimate, as torch.std computes it. Groups whose rewards are all equal get 0.
struct Advantages {
  std::vector<double> values;      // flattened in group order
  int64_t zero_variance_groups = 0;  // groups that contribute no gradient
  double reward_mean = 0, reward_std = 0;  // over the whole batch
};
// What a reward is compared with: its group's mean (GRPO; a group whose rewards are all
// equal gets 0), or the mean of the group's other rewards (leave-one-out, RLOO/TRLOO:
// r - (sum - r) / (n - 1), 0 in a group of one).
enum class Baseline { group_mean, leave_one_out };
Baseline baseline_from(const std::string& name);  // "mean" or "leave_one_out"
Advantages compute_advantages(const std::vector<std::vector<double>>& group_rewards,
                              RewardScaling scaling, double eps = 1e-4,
                              Baseline baseline = Baseline::group_mean);

// Advantages the caller computed, one per completion, checked (sizes, finite) and kept as
// they are; the reward statistics still come from the rewards. A group whose advantages
// are all zero counts as contributing no gradient.
Advantages given_advantages(const std::vector<std::vector<double>>& group_rewards,
                            const std::vector<std::vector<double>>& group_advantages);

}  // namespace train
