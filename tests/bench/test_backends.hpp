// Back ends that misbehave on purpose, for the sandbox's tests. The test program
// registers them by name (so its options accept them) and bench_test_sandbox, its
// evaluation process, registers them to compile with.
#pragma once

#include <memory>

#include "compile/compiler.hpp"

namespace bench_test {

// Handles nothing: the sandbox must fall back to gcc and say so.
struct Unsupported final : bench::Backend {
  const char* name() const override { return "never"; }
  bench::CompiledKernel compile(const std::string&, const bench::CompileOptions&) override {
    bench::CompiledKernel k;
    k.status = bench::CompileStatus::unsupported;
    k.backend = "never";
    k.diagnostics = "kernel.c:1:1: sorry, unimplemented: everything";
    return k;
  }
};

// Loads something with a forbidden reference and does not check it.
struct Careless final : bench::Backend {
  const char* name() const override { return "careless"; }
  bench::CompiledKernel compile(const std::string& src, const bench::CompileOptions& o) override {
    auto k = bench::find_backend("gcc")->compile(src, o);
    k.backend = "careless";
    k.status = bench::CompileStatus::ok;
    k.external_symbols.push_back("cblas_dgemm");
    return k;
  }
};

inline void register_test_backends() {
  bench::register_backend(std::make_unique<Unsupported>());
  bench::register_backend(std::make_unique<Careless>());
}

}  // namespace bench_test
