// The evaluation's "gccjit" back end (bench::Backend): kernelc in memory.
#pragma once

#include "compile/compiler.hpp"

namespace kernelc {

class GccJitBackend : public bench::Backend {
 public:
  const char* name() const override { return "gccjit"; }
  bench::CompiledKernel compile(const std::string& source, const bench::CompileOptions& opts) override;
  nlohmann::json features(const std::string& source) override;
};

}  // namespace kernelc
