// What is evaluated: a task owns its inputs (different for every call), their reference
// outputs, the one call the timer measures and the check of each call's result. The
// sandbox knows only this interface. Two kinds exist: the paper's matmul (matmul.cpp) and
// the generic task a Lua spec describes (generic.cpp, spec.hpp), which every other task
// of the suite is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench {

// Memory with PROT_NONE guard pages on both sides; the data ends at the trailing guard
// (up to 64-byte alignment of its start), so running off either end faults, and the
// slack between the data and the guards holds all-ones bits (NaN, or -1 as int).
class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  GuardedBuffer(size_t bytes, bool shared);  // shared: MAP_SHARED, visible across fork
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& o) noexcept { *this = std::move(o); }
  GuardedBuffer& operator=(GuardedBuffer&& o) noexcept;
  double* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  void protect_read_only();
  void unmap();  // in a child: drop a mapping that belongs to someone else
  bool contains(uintptr_t a) const;
  bool in_guard(uintptr_t a) const;  // within a page either side of the data
 private:
  void* base_ = nullptr;
  size_t map_len_ = 0;
  double* data_ = nullptr;
  size_t bytes_ = 0;
};

// Memory for what a kernel must never see (the inputs of calls still to come, the
// reference outputs): private to the evaluation process, wiped in its children where the
// operating system can (MADV_WIPEONFORK), and unmapped by every child before anything of
// the kernel's is loaded.
class SecretBuffer {
 public:
  SecretBuffer() = default;
  explicit SecretBuffer(size_t doubles);
  ~SecretBuffer() { forget(); }
  SecretBuffer(SecretBuffer&& o) noexcept { *this = std::move(o); }
  SecretBuffer& operator=(SecretBuffer&& o) noexcept;
  double* data() const { return data_; }
  size_t doubles() const { return doubles_; }
  void forget();  // unmaps it (in a child: nothing else is touched)
 private:
  double* data_ = nullptr;
  size_t doubles_ = 0;
};

// The memory one kernel's process works on, shared with the zygote: the inputs of the
// current call (read-only to the kernel) and its outputs (in-out buffers hold their
// inputs first). The zygote writes each call's inputs and reads each call's outputs while
// the kernel's process is stopped. Names are the prototype's, for messages.
struct Stage {
  std::vector<GuardedBuffer> inputs;
  std::vector<GuardedBuffer> outputs;
  std::vector<std::string> input_names, output_names;
};

struct Check {
  bool passed = false;
  double max_rel_error = 0;
  std::string message;  // the first failing element, when not passed
};

// How outputs are checked: "fp64" compares every element against an error bound for
// double precision (a lower precision fails); "paper" is the paper's 105 points with a
// relative error of 1e-6 (the points drawn from a secret the kernel never sees).
bool known_verify_mode(const std::string& mode);

// What bench.reference measures, loaded into the calling process (a reference child).
struct Yardstick {
  void* entry = nullptr;
  std::string library;  // "openblas", "blis", "fftw", ... or "reference" (the spec's own C)
  std::string version;  // as the library reports it
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string describe() const = 0;     // "matmul 256x256x256 seed random"
  virtual std::string key() const = 0;          // equal keys: the same task (the zygote keeps one)
  virtual std::string entry() const = 0;        // the function a kernel defines
  virtual double flops() const = 0;             // per call
  virtual double bytes() const = 0;             // per call: each input read, each output written once
  virtual nlohmann::json options() const = 0;   // the problem as given, with defaults
  // The verify modes (known_verify_mode) this task checks by.
  virtual std::vector<std::string> verify_modes() const { return {"fp64", "paper"}; }

  // In the zygote: inputs for `calls` calls, every call's values different from every
  // other's, with their reference outputs (computed by the library in a short-lived
  // child with `threads` threads). Once per key, again when more calls are asked for.
  virtual void prepare(int calls, int threads) = 0;
  // In the zygote, before the kernel's process is forked: its shared memory.
  virtual Stage make_stage() const = 0;
  // In the zygote, while the kernel's process waits or is stopped: call `c`'s inputs
  // into the stage and the output filled with its initial contents (NaN by default).
  virtual void load_call(Stage& stage, int c) const = 0;
  // In the child, between the clock reads: exactly one call of the kernel.
  virtual void invoke(void* entry, Stage& stage) const = 0;
  // The yardsticks this task is measured against, by name: bench.reference tries each.
  virtual std::vector<std::string> yardsticks() const = 0;
  // In the child: the named yardstick ("" : the first) loaded with `threads` threads (there,
  // so neither the zygote nor kernel children ever map it). Throws when unavailable.
  virtual Yardstick reference_entry(int threads, const std::string& name) = 0;
  // In the child, before each call of the library routine (untimed): the same call into
  // memory of its own, so that the pool is awake and the inputs cached, as in a user's
  // loop over the same buffers. Kernels get no such call (it would hand them the answer).
  virtual void wake_reference(void* entry, Stage& stage) = 0;
  // In the zygote, while the kernel's process is stopped: call `c`'s output against its
  // reference. `secret` draws sampled points (mode "paper").
  virtual Check verify(const Stage& stage, int c, const std::string& mode, uint64_t secret) const = 0;
  // Names an address inside the task's inputs for fault messages ("" when not).
  virtual std::string locate(const Stage& stage, uintptr_t addr, bool write) const = 0;
  // In a child, first thing: unmaps every secret (prepared inputs, references).
  virtual void forget_secrets() = 0;
};

// Builds the task a problem table describes: {kind = "matmul", M, N, K, seed, c_init}, or
// a spec's {task = NAME, size = {...}, seed, spec = {...}} (spec.hpp). Throws
// std::invalid_argument naming a bad field.
std::unique_ptr<Task> make_task(const nlohmann::json& problem);
std::unique_ptr<Task> make_matmul(const nlohmann::json& problem);
std::unique_ptr<Task> make_generic_task(const nlohmann::json& problem);

// The inputs of call `call` of a spec's problem (as make_generic_task takes it), drawn under
// its seed or a fresh key: {name = [values]} for every drawn buffer and scalar. What the
// tests of the suite's draws read; no evaluation uses it.
nlohmann::json draw_task_inputs(const nlohmann::json& problem, int call);

}  // namespace bench
