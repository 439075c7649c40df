#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "cuda/api.hpp"
#include "cuda/cuda.hpp"

namespace cuda::detail {

namespace {

template <typename F>
bool find(void* lib, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && missing.empty()) missing = name;
  return out != nullptr;
}

std::string load_driver(Driver& d) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "no CUDA driver on this machine (libcuda.so.1 cannot be loaded: " + std::string(dlerror()) + ")";
  std::string missing;
  find(lib, "cuInit", d.cuInit, missing);
  find(lib, "cuDriverGetVersion", d.cuDriverGetVersion, missing);
  find(lib, "cuDeviceGetCount", d.cuDeviceGetCount, missing);
  find(lib, "cuDeviceGet", d.cuDeviceGet, missing);
  find(lib, "cuDeviceGetName", d.cuDeviceGetName, missing);
  find(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, missing);
  find(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, missing);
  find(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, missing);
  find(lib, "cuCtxSetLimit", d.cuCtxSetLimit, missing);
  find(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, missing);
  find(lib, "cuModuleGetFunction", d.cuModuleGetFunction, missing);
  find(lib, "cuModuleUnload", d.cuModuleUnload, missing);
  find(lib, "cuGetErrorString", d.cuGetErrorString, missing);
  find(lib, "cuMemAlloc_v2", d.cuMemAlloc, missing);
  find(lib, "cuMemFree_v2", d.cuMemFree, missing);
  find(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, missing);
  find(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, missing);
  find(lib, "cuMemsetD32_v2", d.cuMemsetD32, missing);
  find(lib, "cuMemsetD16_v2", d.cuMemsetD16, missing);
  find(lib, "cuLaunchKernel", d.cuLaunchKernel, missing);
  find(lib, "cuStreamCreate", d.cuStreamCreate, missing);
  find(lib, "cuStreamDestroy_v2", d.cuStreamDestroy, missing);
  find(lib, "cuEventCreate", d.cuEventCreate, missing);
  find(lib, "cuEventRecord", d.cuEventRecord, missing);
  find(lib, "cuEventDestroy_v2", d.cuEventDestroy, missing);
  find(lib, "cuCtxSynchronize", d.cuCtxSynchronize, missing);
  // Drivers from CUDA 12.8 have a _v2; older ones only the first
  if (!(d.cuEventElapsedTime = reinterpret_cast<decltype(d.cuEventElapsedTime)>(dlsym(lib, "cuEventElapsedTime_v2"))))
    find(lib, "cuEventElapsedTime", d.cuEventElapsedTime, missing);
  return missing.empty() ? "" : "the CUDA driver lacks " + missing;
}

std::string load_nvrtc(Nvrtc& n) {
  std::vector<std::string> names;
  if (const char* own = std::getenv("ENGINE_NVRTC"); own && *own) names.push_back(own);
  for (const char* v : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}) names.push_back(v);
  void* lib = nullptr;
  for (const auto& name : names)
    if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      n.library = name;
      break;
    }
  if (!lib) return "no NVRTC on this machine (libnvrtc.so cannot be loaded; ENGINE_NVRTC may name it)";
  std::string missing;
  find(lib, "nvrtcVersion", n.nvrtcVersion, missing);
  find(lib, "nvrtcCreateProgram", n.nvrtcCreateProgram, missing);
  find(lib, "nvrtcCompileProgram", n.nvrtcCompileProgram, missing);
  find(lib, "nvrtcGetProgramLogSize", n.nvrtcGetProgramLogSize, missing);
  find(lib, "nvrtcGetProgramLog", n.nvrtcGetProgramLog, missing);
  find(lib, "nvrtcGetCUBINSize", n.nvrtcGetCUBINSize, missing);
  find(lib, "nvrtcGetCUBIN", n.nvrtcGetCUBIN, missing);
  find(lib, "nvrtcDestroyProgram", n.nvrtcDestroyProgram, missing);
  find(lib, "nvrtcGetErrorString", n.nvrtcGetErrorString, missing);
  return missing.empty() ? "" : n.library + " lacks " + missing;
}

Machine load() {
  Machine m;
  if ((m.reason = load_driver(m.driver)) != "") return m;
  const Driver& d = m.driver;
  if (CUresult r = d.cuInit(0)) {
    m.reason = "the CUDA driver did not start: " + driver_error(d, r);
    return m;
  }
  int count = 0;
  if (d.cuDeviceGetCount(&count) || count < 1) {
    m.reason = "the CUDA driver sees no GPU";
    return m;
  }
  if (CUresult r = d.cuDeviceGet(&m.device, 0)) {
    m.reason = "GPU 0: " + driver_error(d, r);
    return m;
  }
  d.cuDeviceGetAttribute(&m.major, kAttrCapabilityMajor, m.device);
  d.cuDeviceGetAttribute(&m.minor, kAttrCapabilityMinor, m.device);
  m.reason = load_nvrtc(m.nvrtc);
  return m;
}

}  // namespace

Machine& machine() {
  static Machine m = load();
  return m;
}

std::string driver_error(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString) d.cuGetErrorString(r, &s);
  return (s ? std::string(s) : "CUDA error") + " (" + std::to_string(r) + ")";
}

}  // namespace cuda::detail

namespace cuda {

nlohmann::json probe() {
  detail::Machine& m = detail::machine();
  nlohmann::json j = {{"available", m.reason.empty()}, {"reason", m.reason}};
  if (m.major == 0) return j;  // no device was read
  char name[256] = {0};
  m.driver.cuDeviceGetName(name, sizeof name - 1, m.device);
  int version = 0;
  m.driver.cuDriverGetVersion(&version);
  j["device"] = name;
  j["capability"] = std::to_string(m.major) + "." + std::to_string(m.minor);
  j["sm"] = "sm_" + std::to_string(m.major) + std::to_string(m.minor);
  j["driver_version"] = version;
  // The nominal peaks the impossible-speed check uses: DRAM's (double data rate over the
  // bus) and single precision's on the CUDA cores (FP32 lanes per SM by architecture).
  int sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0;
  m.driver.cuDeviceGetAttribute(&sms, detail::kAttrMultiprocessors, m.device);
  m.driver.cuDeviceGetAttribute(&clock_khz, detail::kAttrClockKhz, m.device);
  m.driver.cuDeviceGetAttribute(&memory_khz, detail::kAttrMemoryClockKhz, m.device);
  m.driver.cuDeviceGetAttribute(&bus_bits, detail::kAttrMemoryBusBits, m.device);
  const int lanes = (m.major == 8 && m.minor == 0) || m.major < 8 ? 64 : 128;
  j["multiprocessors"] = sms;
  j["clock_mhz"] = clock_khz / 1000.0;
  j["peak_gbps"] = 2.0 * memory_khz * 1e3 * bus_bits / 8 / 1e9;
  j["peak_fp32_gflops"] = static_cast<double>(sms) * lanes * 2 * clock_khz * 1e3 / 1e9;
  if (m.nvrtc.nvrtcVersion) {
    int major = 0, minor = 0;
    m.nvrtc.nvrtcVersion(&major, &minor);
    j["nvrtc"] = std::to_string(major) + "." + std::to_string(minor);
    j["nvrtc_library"] = m.nvrtc.library;
  }
  return j;
}

}  // namespace cuda
