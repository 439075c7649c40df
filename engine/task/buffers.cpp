// The memory of a task: guarded buffers (what a kernel's process sees) and secret buffers
// (what it must never see).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "task/task.hpp"

namespace bench {

// ---- guarded buffers ------------------------------------------------------------

static size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

GuardedBuffer::GuardedBuffer(size_t bytes, bool shared) : bytes_(bytes) {
  const size_t page = page_size();
  const size_t body = (bytes + 64 + page - 1) / page * page;  // room for the alignment slack
  map_len_ = body + 2 * page;
  base_ = mmap(nullptr, map_len_, PROT_NONE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::runtime_error("cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  }
  auto* body_start = static_cast<char*>(base_) + page;
  if (mprotect(body_start, body, PROT_READ | PROT_WRITE) != 0)
    throw std::runtime_error(std::string("mprotect: ") + std::strerror(errno));
  uintptr_t end = reinterpret_cast<uintptr_t>(body_start + body);
  data_ = reinterpret_cast<double*>((end - bytes) & ~uintptr_t(63));
  // Around the data, up to the guards: all bits set (NaN as doubles, -1 as ints), so that
  // a read just outside the data that no guard catches (the alignment's slack) poisons
  // the result instead of adding zeros.
  std::memset(body_start, 0xff, body);
}

GuardedBuffer::~GuardedBuffer() { unmap(); }

GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& o) noexcept {
  if (this != &o) {
    unmap();
    std::swap(base_, o.base_);
    std::swap(map_len_, o.map_len_);
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
  }
  return *this;
}

void GuardedBuffer::protect_read_only() {
  const size_t page = page_size();
  mprotect(static_cast<char*>(base_) + page, map_len_ - 2 * page, PROT_READ);
}

void GuardedBuffer::unmap() {
  if (base_) munmap(base_, map_len_);
  base_ = nullptr;
  data_ = nullptr;
  map_len_ = bytes_ = 0;
}

bool GuardedBuffer::contains(uintptr_t a) const {
  auto d = reinterpret_cast<uintptr_t>(data_);
  return data_ && a >= d && a < d + bytes_;
}

bool GuardedBuffer::in_guard(uintptr_t a) const {
  auto b = reinterpret_cast<uintptr_t>(base_);
  return base_ && a >= b && a < b + map_len_ && !contains(a);
}

// ---- secrets ------------------------------------------------------------------

SecretBuffer::SecretBuffer(size_t doubles) : doubles_(doubles) {
  void* p = mmap(nullptr, std::max<size_t>(doubles, 1) * sizeof(double), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    doubles_ = 0;
    throw std::runtime_error("cannot map " + std::to_string(doubles * sizeof(double)) +
                             " bytes for the reference data: " + std::strerror(errno));
  }
#ifdef MADV_WIPEONFORK
  madvise(p, std::max<size_t>(doubles, 1) * sizeof(double), MADV_WIPEONFORK);  // children also unmap it
#endif
  data_ = static_cast<double*>(p);
}

SecretBuffer& SecretBuffer::operator=(SecretBuffer&& o) noexcept {
  if (this != &o) {
    forget();
    std::swap(data_, o.data_);
    std::swap(doubles_, o.doubles_);
  }
  return *this;
}

void SecretBuffer::forget() {
  if (data_) munmap(data_, std::max<size_t>(doubles_, 1) * sizeof(double));
  data_ = nullptr;
  doubles_ = 0;
}

bool known_verify_mode(const std::string& mode) { return mode == "fp64" || mode == "paper"; }

}  // namespace bench
