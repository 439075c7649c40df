// The torch side of a loaded policy, for code that trains or measures its model
// (engine/train, benchmarks, tests). The Lua host and anything else that only samples
// needs policy.hpp alone; the policy's own state stays in policy_impl.hpp.
#pragma once

#include <c10/core/DeviceGuard.h>
#include <torch/torch.h>

#include "policy/model.hpp"
#include "policy/policy.hpp"

namespace policy {

// CUDA kernels launch on the current device, not on their tensors' device: every entry
// point that computes with a policy makes its device current for its duration, whatever
// device the caller left current (a follower rank on cuda:1, a script with two policies).
class OnDevice {
 public:
  explicit OnDevice(const torch::Device& device) {
    if (device.is_cuda()) guard_.reset_device(device);
  }

 private:
  c10::OptionalDeviceGuard guard_;
};

struct TorchSide {
  // The module that samples: a trainer updates these very weights.
  static Transformer& model(Policy& p);
  static torch::Device device(const Policy& p);
};

}  // namespace policy
