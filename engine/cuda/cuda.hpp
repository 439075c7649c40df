// CUDA kernels on the GPU node: what the machine offers, and a kernel's source compiled in
// memory by NVRTC for the GPU's compute capability and loaded by the driver.
//
// The driver (libcuda.so.1) and NVRTC (libnvrtc.so, or a versioned name; ENGINE_NVRTC
// names a file) are loaded at run time: a machine without them gets "unavailable" and the
// reason, never a build or load failure. Every function here initialises the driver, so
// it runs in a process of its own that forks nothing afterwards (the evaluation process
// calls these in a fresh child; a CUDA context does not survive fork).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuda {

// {available, reason ("" when available), device, capability "9.0", sm "sm_90",
//  driver_version 13000, nvrtc "13.0", nvrtc_library}: device 0 of this machine.
nlohmann::json probe();

// Compiles `source` (CUDA C++; entries declared extern "C" __global__) for device 0's
// architecture and loads it. Returns {status, log, arch, cubin_bytes, compile_ms (NVRTC),
// start_ms (the driver and NVRTC loaded and started, the first time in a process),
// load_ms (a context, the module loaded), entries}: status "ok"; "compile_error" (NVRTC's log names kernel.cu(LINE)); "load_error"
// (the driver refused the image, or an entry is missing: `log` says which); "unavailable"
// (`log` is probe's reason). `entries` lists those found.
nlohmann::json compile(const std::string& source, const std::vector<std::string>& entries);

// Fills input buffer `arg` of call `call` (warm-up calls first, from 0) with its `bytes`
// (floats, or bfloat16 for a bf16 buffer); false when they cannot be had. The values come
// from outside this process.
using InputReader = std::function<bool(int call, size_t arg, void* dst, size_t bytes)>;

// Takes the outputs of call `call` (every call but the last), their bytes as the device
// held them, laid end to end in argument order (cuda/calls.hpp); false when they cannot be
// sent on.
using CallOutputs = std::function<bool(int call, const std::string& bytes)>;

// Compiles `source` and runs `launch` (cuda/launch.hpp's fields) on device 0, each call's
// inputs from `read_inputs`, each earlier call's outputs to `call_outputs` (untimed,
// after the call): compile's record, and when it ran {times_ms, wall_ms (per timed
// call), calls_ms (every call with its inputs and outputs, warm-up ones too), outputs
// (each output buffer after the last call, a float_blob)}. status
// "launch_error" (the driver refused the launch: the grid, the block, the shared memory)
// or "runtime_error" (the kernel faulted: which call; or the inputs did not come) with
// `log`. Throws std::invalid_argument for a malformed launch. The driver prints a kernel's
// device printf on this process's stdout; its buffer is bounded (64 KiB).
nlohmann::json run(const std::string& source, const nlohmann::json& launch, const InputReader& read_inputs,
                   const CallOutputs& call_outputs = {});

// A run's buffers travel from the kernel's process to the engine as CBOR byte strings of
// the floats' bytes (both ends are one machine), not as arrays of numbers: a task's run at
// its training size holds millions of them.
nlohmann::json float_blob(const float* values, size_t count);
// One buffer's floats: a blob, or a list of numbers. Throws std::invalid_argument.
std::vector<float> floats_of(const nlohmann::json& buffer);
// Each blob of a list of buffers turned into a list of numbers (for scripts), in place.
void blobs_to_numbers(nlohmann::json& buffers);

// Times work another library queues on device 0 from this thread (libtorch's ops on its
// default stream) the way run() times a kernel: the whole device synchronised before and
// after, events recorded on the legacy default stream (ordered after and before the work
// of every blocking stream), a wall clock beside. Makes the device's primary context, the
// one libtorch uses, current. For the engine's own process, where libtorch already holds
// the device; nothing of the kernels' runs comes near it.
class EventClock {
 public:
  // Throws std::runtime_error naming why: probe()'s reason, or the driver's error.
  EventClock();
  ~EventClock();
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;

  struct Reading {
    double events_ms = 0;
    double wall_ms = 0;
  };
  void start();
  Reading stop();  // after the work queued since start() has ended

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
  double wall_start_ = 0;
};

}  // namespace cuda
