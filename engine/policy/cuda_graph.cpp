#include "policy/cuda_graph.hpp"

#if POLICY_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <stdexcept>

namespace policy {

#if POLICY_CUDA

struct GraphedStep::Impl {
  at::cuda::CUDAGraph graph;
  torch::Tensor out;
};

bool GraphedStep::supported() { return true; }

GraphedStep::GraphedStep(const std::function<torch::Tensor()>& fn, const torch::Device& device)
    : impl_(std::make_unique<Impl>()) {
  c10::cuda::CUDAGuard device_guard(device);
  torch::cuda::synchronize(device.index());
  // Capture must happen on a stream other than the legacy default stream.
  auto stream = c10::cuda::getStreamFromPool(false, device.index());
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    fn();
    fn();
    stream.synchronize();
    impl_->graph.capture_begin();
    impl_->out = fn();
    impl_->graph.capture_end();
  }
  stream.synchronize();
}

torch::Tensor GraphedStep::replay() {
  impl_->graph.replay();
  return impl_->out;
}

#else

struct GraphedStep::Impl {};

bool GraphedStep::supported() { return false; }

GraphedStep::GraphedStep(const std::function<torch::Tensor()>&, const torch::Device&) {
  throw std::runtime_error("CUDA graphs need a CUDA build of libtorch");
}

torch::Tensor GraphedStep::replay() { return {}; }

#endif

GraphedStep::~GraphedStep() = default;

}  // namespace policy
