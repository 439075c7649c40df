#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/api.hpp"
#include "cuda/cuda.hpp"

namespace cuda {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// NVRTC's log, or "" when it wrote none.
std::string program_log(const detail::Nvrtc& n, detail::nvrtcProgram p) {
  size_t size = 0;
  if (n.nvrtcGetProgramLogSize(p, &size) || size <= 1) return "";
  std::string log(size, '\0');
  n.nvrtcGetProgramLog(p, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

namespace detail {

CUmodule build(const std::string& source, const std::vector<std::string>& entries, nlohmann::json& r) {
  const auto started = std::chrono::steady_clock::now();
  Machine& m = machine();  // the first call in a process loads and starts the driver and NVRTC
  r = {{"status", "unavailable"}, {"log", m.reason}, {"cubin_bytes", 0}, {"compile_ms", 0.0},
       {"start_ms", ms_since(started)}, {"entries", nlohmann::json::array()}};
  if (!m.reason.empty()) return nullptr;
  const Nvrtc& n = m.nvrtc;
  const Driver& d = m.driver;
  const std::string arch = "sm_" + std::to_string(m.major) + std::to_string(m.minor);
  r["arch"] = arch;
  const auto t0 = std::chrono::steady_clock::now();
  detail::nvrtcProgram prog = nullptr;
  if (detail::nvrtcResult e = n.nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr)) {
    r["status"] = "compile_error";
    r["log"] = std::string("NVRTC could not take the source: ") + n.nvrtcGetErrorString(e);
    return nullptr;
  }
  // A real architecture: NVRTC emits the GPU's machine code (a cubin), which the driver
  // loads without a second compile.
  const std::string arch_flag = "--gpu-architecture=" + arch;
  const char* options[] = {arch_flag.c_str(), "--std=c++17", "-default-device"};
  detail::nvrtcResult compiled = n.nvrtcCompileProgram(prog, 3, options);
  r["log"] = program_log(n, prog);
  r["compile_ms"] = ms_since(t0);
  std::string cubin;
  if (compiled == 0) {
    size_t size = 0;
    if (n.nvrtcGetCUBINSize(prog, &size) == 0 && size > 0) {
      cubin.resize(size);
      n.nvrtcGetCUBIN(prog, cubin.data());
    }
  }
  n.nvrtcDestroyProgram(&prog);
  if (compiled != 0 || cubin.empty()) {
    r["status"] = "compile_error";
    if (r["log"].get<std::string>().empty()) r["log"] = std::string("NVRTC: ") + n.nvrtcGetErrorString(compiled);
    return nullptr;
  }
  r["cubin_bytes"] = cubin.size();

  const auto loading = std::chrono::steady_clock::now();
  detail::CUcontext ctx = nullptr;
  if (detail::CUresult e = d.cuDevicePrimaryCtxRetain(&ctx, m.device); e || d.cuCtxSetCurrent(ctx)) {
    r["status"] = "load_error";
    r["log"] = "no context on the GPU: " + detail::driver_error(d, e);
    return nullptr;
  }
  // Device printf's buffer bounded before any module is loaded (the driver takes the limit
  // only then). What a kernel prints reaches this process's stdout, which the evaluation
  // process captures (evaluator/cuda_child.cpp); a refusal leaves the driver's default.
  d.cuCtxSetLimit(kLimitPrintfFifoSize, kPrintfFifoBytes);
  char jit_log[4096] = {0};
  int keys[] = {detail::kJitErrorLogBuffer, detail::kJitErrorLogSize};
  void* values[] = {jit_log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof jit_log))};
  detail::CUmodule module = nullptr;
  if (detail::CUresult e = d.cuModuleLoadDataEx(&module, cubin.data(), 2, keys, values)) {
    r["status"] = "load_error";
    r["log"] = "the driver refused the compiled kernel: " + detail::driver_error(d, e) + "\n" + jit_log;
    return nullptr;
  }
  r["load_ms"] = ms_since(loading);
  std::string missing;
  for (const auto& name : entries) {
    detail::CUfunction f = nullptr;
    if (d.cuModuleGetFunction(&f, module, name.c_str()) == 0 && f) r["entries"].push_back(name);
    else missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) {
    d.cuModuleUnload(module);  // a child serving a batch goes on in this context
    r["status"] = "load_error";
    r["log"] = "kernel.cu defines no extern \"C\" __global__ function " + missing +
               (r["log"].get<std::string>().empty() ? "" : "\n" + r["log"].get<std::string>());
    return nullptr;
  }
  r["status"] = "ok";
  return module;
}

}  // namespace detail

nlohmann::json compile(const std::string& source, const std::vector<std::string>& entries) {
  nlohmann::json r;
  detail::build(source, entries, r);
  return r;
}

}  // namespace cuda
