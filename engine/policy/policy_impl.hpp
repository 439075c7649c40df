// Policy's private torch side, shared by policy.cpp and generate.cpp.
#pragma once

#include "policy/model.hpp"
#include "policy/policy.hpp"

namespace policy {

struct Policy::Impl {
  Transformer model{nullptr};
  torch::Device device{torch::kCPU};
  torch::Dtype dtype = torch::kFloat32;
  std::string device_name, dtype_name;
  bool cuda_graphs = true;
};

}  // namespace policy
