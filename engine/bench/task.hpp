// What is evaluated: a task owns its inputs, its reference output, the one call the
// timer measures and the check of the result. The sandbox knows only this interface,
// so other kernels (stencils, FFT) are new Task types, not sandbox changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace bench {

// Memory with PROT_NONE guard pages on both sides; the data ends exactly at the trailing
// guard (up to 64-byte alignment of its start), so running off either end faults.
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

struct Check {
  bool passed = false;
  double max_rel_error = 0;
  std::string message;  // the first failing point, when not passed
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string describe() const = 0;     // "matmul 256x256x256 seed 42"
  virtual std::string key() const = 0;          // identical inputs share a key
  virtual std::string entry() const = 0;        // the function a kernel defines
  virtual double flops() const = 0;             // per call
  virtual nlohmann::json options() const = 0;   // the problem as given, with defaults

  // In the zygote, once per key: inputs (read-only, guarded) and the reference output.
  // `threads`: how many the reference computation may use.
  virtual void prepare(int threads) = 0;
  virtual size_t output_bytes() const = 0;
  // In the child, before every call: the output's initial contents.
  virtual void reset_output(double* out) const = 0;
  // In the child, between the clock reads: exactly one call of the kernel.
  virtual void invoke(void* entry, double* out) const = 0;
  // In the child: the library routine measured by bench.reference (loaded there, so
  // neither the zygote nor kernel children ever map it). Throws when unavailable.
  virtual void* reference_entry(int threads) = 0;
  // In the zygote, after the child ended: the kernel's output against the reference.
  virtual Check verify(const double* out, const std::string& mode) const = 0;
  // Names an address inside the task's inputs for fault messages ("" when not).
  virtual std::string locate(uintptr_t addr, bool write) const = 0;
};

// Builds the task a problem table describes: {kind = "matmul", M, N, K, seed, c_init}.
// Throws std::invalid_argument naming a bad field.
std::unique_ptr<Task> make_task(const nlohmann::json& problem);

}  // namespace bench
