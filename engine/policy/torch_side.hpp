// The torch side of a loaded policy, for code that trains or measures its model
// (engine/train, benchmarks, tests). The Lua host and anything else that only samples
// needs policy.hpp alone; the policy's own state stays in policy_impl.hpp.
#pragma once

#include <torch/torch.h>

#include "policy/model.hpp"
#include "policy/policy.hpp"

namespace policy {

struct TorchSide {
  // The module that samples: a trainer updates these very weights.
  static Transformer& model(Policy& p);
  static torch::Device device(const Policy& p);
};

}  // namespace policy
