// libFuzzer target over the preprocessor, parser, checker and feature extraction: any
// input must end in a result or a diagnostic, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernelc/kernelc.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string src(reinterpret_cast<const char*>(data), size);
  kernelc::Result r = kernelc::check(src, kernelc::Options{});
  if (r.status != kernelc::Status::ok && r.diagnostics.empty()) __builtin_trap();  // every failure says why
  nlohmann::json f = kernelc::features(src);
  if (f.is_null()) __builtin_trap();
  return 0;
}
