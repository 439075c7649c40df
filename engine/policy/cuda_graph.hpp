// One decode step recorded as a CUDA graph and replayed: a step of a large model is
// thousands of small kernels, and launching them one by one from the CPU would cost more
// than running them. No CUDA headers here; without CUDA, supported() is false.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>

namespace policy {

class GraphedStep {
 public:
  static bool supported();
  // Runs fn twice to warm up (allocations, library handles) when it is the first
  // recording on the device in this process, then records it. fn must read its inputs
  // from tensors that stay in place, and must not synchronise.
  GraphedStep(const std::function<torch::Tensor()>& fn, const torch::Device& device);
  ~GraphedStep();
  // Replays the recorded kernels; returns fn's output tensor (overwritten by each replay).
  torch::Tensor replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A device tensor's copy to pinned host memory, enqueued on the current stream now and
// awaited later, so the host can read one step's tokens while the device runs the next.
// A CPU tensor is simply kept.
class PendingCopy {
 public:
  explicit PendingCopy(const torch::Tensor& src);
  ~PendingCopy();
  PendingCopy(PendingCopy&&) noexcept;
  PendingCopy& operator=(PendingCopy&&) noexcept;
  // Blocks until the copy has landed; returns the host tensor.
  torch::Tensor wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace policy
