#include "policy/cuda_graph.hpp"

#if POLICY_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace policy {

#if POLICY_CUDA

namespace {

// Every capture on a device uses one stream, so what a first run initialises lazily on
// its stream (cuBLAS workspaces) exists for all later captures, and only the first
// capture of a process needs warm-up runs.
struct CaptureStream {
  std::optional<c10::cuda::CUDAStream> stream;
  bool warmed = false;
};

CaptureStream& capture_stream(c10::DeviceIndex d) {
  static std::mutex mu;
  static std::map<c10::DeviceIndex, CaptureStream> streams;
  std::lock_guard<std::mutex> lock(mu);
  CaptureStream& cs = streams[d];
  if (!cs.stream) cs.stream = c10::cuda::getStreamFromPool(false, d);
  return cs;
}

}  // namespace

struct GraphedStep::Impl {
  at::cuda::CUDAGraph graph;
  torch::Tensor out;
};

bool GraphedStep::supported() { return true; }

GraphedStep::GraphedStep(const std::function<torch::Tensor()>& fn, const torch::Device& device)
    : impl_(std::make_unique<Impl>()) {
  c10::cuda::CUDAGuard device_guard(device);
  const c10::DeviceIndex index = c10::cuda::current_device();
  torch::cuda::synchronize(index);
  // Capture must happen on a stream other than the legacy default stream.
  CaptureStream& cs = capture_stream(index);
  auto stream = *cs.stream;
  {
    c10::cuda::CUDAStreamGuard guard(stream);
    if (!cs.warmed) {
      fn();
      fn();
      stream.synchronize();
      cs.warmed = true;
    }
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

struct PendingCopy::Impl {
  torch::Tensor host;
#if POLICY_CUDA
  std::optional<at::cuda::CUDAEvent> landed;
#endif
};

PendingCopy::PendingCopy(const torch::Tensor& src) : impl_(std::make_unique<Impl>()) {
#if POLICY_CUDA
  if (src.is_cuda()) {
    auto pinned = torch::TensorOptions().dtype(src.dtype()).pinned_memory(true);
    impl_->host = torch::empty(src.sizes(), pinned);
    impl_->host.copy_(src, /*non_blocking=*/true);
    impl_->landed.emplace();
    impl_->landed->record(c10::cuda::getCurrentCUDAStream(src.device().index()));
    return;
  }
#endif
  impl_->host = src.cpu();
}

PendingCopy::~PendingCopy() = default;
PendingCopy::PendingCopy(PendingCopy&&) noexcept = default;
PendingCopy& PendingCopy::operator=(PendingCopy&&) noexcept = default;

torch::Tensor PendingCopy::wait() {
#if POLICY_CUDA
  if (impl_->landed) impl_->landed->synchronize();
#endif
  return impl_->host;
}

}  // namespace policy
