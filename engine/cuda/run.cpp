// A kernel run as the harness runs it: buffers allocated and filled by the harness, fresh
// inputs (read from the process that asked) and NaN-filled outputs before every call, each call timed by events recorded on
// the harness's own stream around the launch and bounded by the wall clock, the whole
// device synchronised before anything is read; every call's outputs read back (the
// earlier calls' through `call_outputs`, the last call's into the record).
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/api.hpp"
#include "cuda/cuda.hpp"
#include "cuda/launch.hpp"

namespace cuda {

namespace {

using nlohmann::json;
using detail::CUresult;

constexpr unsigned kQuietNaN = 0x7FC00000u;  // a float NaN's bits: what an output holds until written
constexpr unsigned short kQuietNaN16 = 0x7FC0;  // the same NaN as bfloat16

struct Failure {
  std::string status, log;
};

void check(const detail::Driver& d, CUresult e, const char* status, const std::string& what) {
  if (e) throw Failure{status, what + ": " + detail::driver_error(d, e)};
}

// Device buffers, the harness's stream and events freed however the run ends (a faulted
// context frees them with itself), so that the warm child goes on with none of an
// earlier kernel's.
struct Buffers {
  const detail::Driver& d;
  std::vector<detail::CUdeviceptr> ptrs;
  detail::CUstream stream = nullptr;
  detail::CUevent start = nullptr, stop = nullptr;
  ~Buffers() {
    for (auto p : ptrs)
      if (p) d.cuMemFree(p);
    for (auto e : {start, stop})
      if (e) d.cuEventDestroy(e);
    if (stream) d.cuStreamDestroy(stream);
  }
};

json run_loaded(const detail::Driver& d, detail::CUmodule module, const Launch& l, const InputReader& read_inputs,
                const CallOutputs& call_outputs) {
  detail::CUfunction fn = nullptr;
  check(d, d.cuModuleGetFunction(&fn, module, l.entry.c_str()), "load_error", "entry " + l.entry);
  Buffers buffers{d, std::vector<detail::CUdeviceptr>(l.args.size(), 0)};
  check(d, d.cuStreamCreate(&buffers.stream, 1 /* CU_STREAM_NON_BLOCKING */), "runtime_error", "the harness's stream");
  check(d, d.cuEventCreate(&buffers.start, 0), "runtime_error", "an event");
  check(d, d.cuEventCreate(&buffers.stop, 0), "runtime_error", "an event");
  detail::CUstream stream = buffers.stream;
  detail::CUevent start = buffers.start, stop = buffers.stop;
  std::vector<int> ints(l.args.size());
  std::vector<float> floats(l.args.size());
  std::vector<void*> params(l.args.size());
  for (size_t i = 0; i < l.args.size(); ++i) {
    const LaunchArg& a = l.args[i];
    if (a.kind == LaunchArg::input || a.kind == LaunchArg::output) {
      check(d, d.cuMemAlloc(&buffers.ptrs[i], a.bytes()), "runtime_error",
            "allocating argument " + std::to_string(i + 1));
      params[i] = &buffers.ptrs[i];
    } else if (a.kind == LaunchArg::int32) {
      ints[i] = static_cast<int>(a.value);
      params[i] = &ints[i];
    } else {
      floats[i] = static_cast<float>(a.value);
      params[i] = &floats[i];
    }
  }

  std::vector<double> times, walls;
  std::vector<char> values;
  std::string raw;
  size_t out_bytes = 0;
  for (const auto& a : l.args)
    if (a.kind == LaunchArg::output) out_bytes += a.bytes();
  const int total = l.warmup + l.calls;
  for (int call = 0; call < total; ++call) {
    for (size_t i = 0; i < l.args.size(); ++i) {
      const LaunchArg& a = l.args[i];
      if (a.kind == LaunchArg::input) {
        values.resize(a.bytes());
        if (!read_inputs(call, i, values.data(), a.bytes()))
          throw Failure{"runtime_error", "the harness's inputs for call " + std::to_string(call + 1) + " did not come"};
        check(d, d.cuMemcpyHtoD(buffers.ptrs[i], values.data(), a.bytes()), "runtime_error",
              "copying input " + std::to_string(i + 1));
      } else if (a.kind == LaunchArg::output) {
        check(d, a.bf16 ? d.cuMemsetD16(buffers.ptrs[i], kQuietNaN16, a.count) : d.cuMemsetD32(buffers.ptrs[i], kQuietNaN, a.count),
              "runtime_error",
              "filling output " + std::to_string(i + 1));
      }
    }
    check(d, d.cuCtxSynchronize(), "runtime_error", "before call " + std::to_string(call + 1));
    const auto t0 = std::chrono::steady_clock::now();
    check(d, d.cuEventRecord(start, stream), "runtime_error", "the start event");
    check(d, d.cuLaunchKernel(fn, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                              l.shared_bytes, stream, params.data(), nullptr),
          "launch_error", "launching " + l.entry);
    check(d, d.cuEventRecord(stop, stream), "runtime_error", "the stop event");
    // The whole device, not the stream: work the kernel left elsewhere ends inside the call.
    check(d, d.cuCtxSynchronize(), "runtime_error", "the kernel failed in call " + std::to_string(call + 1));
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    float ms = 0;
    check(d, d.cuEventElapsedTime(&ms, start, stop), "runtime_error", "reading the events");
    if (call >= l.warmup) {
      times.push_back(ms);
      walls.push_back(wall);
    }
    // Every call's outputs are checked, not only the last's: each earlier call's go back
    // whole, untimed, before the next call's inputs and NaN overwrite them.
    if (call + 1 < total && call_outputs) {
      raw.resize(out_bytes);
      size_t at = 0;
      for (size_t i = 0; i < l.args.size(); ++i) {
        if (l.args[i].kind != LaunchArg::output) continue;
        check(d, d.cuMemcpyDtoH(raw.data() + at, buffers.ptrs[i], l.args[i].bytes()), "runtime_error",
              "reading output " + std::to_string(i + 1) + " of call " + std::to_string(call + 1));
        at += l.args[i].bytes();
      }
      if (!call_outputs(call, raw))
        throw Failure{"runtime_error", "call " + std::to_string(call + 1) + "'s outputs could not be sent back"};
    }
  }

  json outputs = json::array();
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (l.args[i].kind != LaunchArg::output) continue;
    std::vector<float> host(l.args[i].count);
    if (l.args[i].bf16) {  // each bfloat16 is a float's upper half: widened exactly
      std::vector<unsigned short> half(l.args[i].count);
      check(d, d.cuMemcpyDtoH(half.data(), buffers.ptrs[i], l.args[i].bytes()), "runtime_error",
            "reading output " + std::to_string(i + 1));
      for (size_t k = 0; k < half.size(); ++k) {
        const uint32_t bits = uint32_t{half[k]} << 16;
        std::memcpy(&host[k], &bits, sizeof bits);
      }
    } else {
      check(d, d.cuMemcpyDtoH(host.data(), buffers.ptrs[i], host.size() * sizeof(float)), "runtime_error",
            "reading output " + std::to_string(i + 1));
    }
    outputs.push_back(float_blob(host.data(), host.size()));
  }
  return {{"times_ms", times}, {"wall_ms", walls}, {"outputs", outputs}};
}

}  // namespace

json run(const std::string& source, const json& launch, const InputReader& read_inputs,
         const CallOutputs& call_outputs) {
  const Launch l = parse_launch(launch);
  json r;
  detail::CUmodule module = detail::build(source, {l.entry}, r);
  if (!module) return r;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    json ran = run_loaded(detail::machine().driver, module, l, read_inputs, call_outputs);
    ran["calls_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.update(ran);
  } catch (const Failure& f) {
    r["status"] = f.status;
    r["log"] = f.log;
  }
  detail::machine().driver.cuModuleUnload(module);
  return r;
}

}  // namespace cuda
