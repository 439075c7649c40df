// Inside engine/cuda only: the entry points of the driver and of NVRTC this module calls,
// declared by hand (no CUDA headers at build time) and found by dlsym.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuda::detail {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;
using CUstream = void*;
using CUevent = void*;
using nvrtcResult = int;
using nvrtcProgram = void*;

constexpr int kAttrCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCapabilityMinor = 76;  // ..._MINOR
constexpr int kAttrMultiprocessors = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrClockKhz = 13;         // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (peak, kHz)
constexpr int kAttrMemoryClockKhz = 36;   // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (peak, kHz)
constexpr int kAttrMemoryBusBits = 37;    // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH
constexpr int kJitErrorLogBuffer = 5;     // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogSize = 6;       // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
constexpr int kLimitPrintfFifoSize = 1;   // CU_LIMIT_PRINTF_FIFO_SIZE
constexpr size_t kPrintfFifoBytes = 64 << 10;  // device printf's buffer (the driver's default: 1 MiB)

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSetLimit)(int, size_t);
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  // Running a kernel (the _v2 entry points where the driver has both)
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuMemsetD16)(CUdeviceptr, unsigned short, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuCtxSynchronize)();
};

struct Nvrtc {
  std::string library;
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
};

// The device this module works on, with the driver initialised; or why there is none.
struct Machine {
  Driver driver{};
  Nvrtc nvrtc{};
  CUdevice device = 0;
  int major = 0, minor = 0;
  std::string reason;  // "" when usable
};

// Loads both libraries and initialises the driver once per process.
Machine& machine();

// Compiles `source` and loads it into device 0's primary context, made current; fills
// `r` as cuda::compile describes. The module, or nullptr when r["status"] is not "ok".
CUmodule build(const std::string& source, const std::vector<std::string>& entries, nlohmann::json& r);
std::string driver_error(const Driver& d, CUresult r);

}  // namespace cuda::detail
