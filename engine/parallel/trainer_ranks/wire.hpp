// How commands and their answers travel between ranks: values written one after another
// into a byte string, read back in the same order. A type's fields are listed once, in a
// function `fields(io, value)` that both the Writer and the Reader walk.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace replica {

class Writer {
 public:
  template <class T>
  std::enable_if_t<std::is_arithmetic_v<T>> operator()(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void operator()(const std::string& s) {
    (*this)(static_cast<uint64_t>(s.size()));
    bytes_ += s;
  }
  template <class T>
  void operator()(const std::vector<T>& v) {
    (*this)(static_cast<uint64_t>(v.size()));
    if constexpr (std::is_arithmetic_v<T>) {
      bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    } else {
      for (const auto& x : v) (*this)(x);
    }
  }
  template <class T>
  void operator()(const std::optional<T>& v) {
    (*this)(static_cast<uint8_t>(v.has_value()));
    if (v) (*this)(*v);
  }
  template <class T>
  auto operator()(const T& v) -> decltype(fields(*this, const_cast<T&>(v)), void()) {
    fields(*this, const_cast<T&>(v));
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  std::enable_if_t<std::is_arithmetic_v<T>> operator()(T& v) {
    std::memcpy(&v, take(sizeof v), sizeof v);
  }
  void operator()(std::string& s) {
    uint64_t n = 0;
    (*this)(n);
    s.assign(take(n), n);
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    uint64_t n = 0;
    (*this)(n);
    if constexpr (std::is_arithmetic_v<T>) {
      if (n > bytes_.size()) throw std::runtime_error("replica: a message ends early");
      v.resize(n);
      std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    } else {
      if (n > bytes_.size()) throw std::runtime_error("replica: a message ends early");
      v.resize(n);
      for (auto& x : v) (*this)(x);
    }
  }
  template <class T>
  void operator()(std::optional<T>& v) {
    uint8_t has = 0;
    (*this)(has);
    if (has) {
      T x{};
      (*this)(x);
      v = std::move(x);
    } else {
      v.reset();
    }
  }
  template <class T>
  auto operator()(T& v) -> decltype(fields(*this, v), void()) {
    fields(*this, v);
  }
  template <class T>
  T read() {
    T v{};
    (*this)(v);
    return v;
  }

 private:
  const char* take(size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("replica: a message ends early");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

}  // namespace replica
