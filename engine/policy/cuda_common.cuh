// What the model's CUDA kernels share: bf16 as raw 16-bit words (the top half of an
// fp32, so no CUDA half-precision headers are needed), launch errors as exceptions, and
// the size of the GPU the launch heuristics fill. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace policy {

__device__ __forceinline__ float bf16_to_float(uint16_t h) {
  return __uint_as_float(static_cast<uint32_t>(h) << 16);
}

__device__ __forceinline__ void bf16x8_to_float(const uint4& u, float* f) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

// Round to nearest even; NaN stays NaN.
__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

__device__ __forceinline__ float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

inline void check_launch(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": launch failed: " + cudaGetErrorString(err));
}

// ask() for the current device, once per device and call site (each lambda is its own
// instantiation, with its own cache).
template <class Ask>
auto once_per_device(Ask&& ask) {
  using T = decltype(ask(0));
  static std::mutex mu;
  static std::map<int, T> known;
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  return known[device] = ask(device);
}

// Multiprocessors of the current device.
inline int sm_count() {
  return once_per_device([](int device) {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1)
      sms = 132;  // an H100's, should the query fail
    return sms;
  });
}

}  // namespace policy
