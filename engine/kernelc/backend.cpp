#include "kernelc/backend.hpp"

#include "kernelc/kernelc.hpp"

namespace kernelc {

bench::CompiledKernel GccJitBackend::compile(const std::string& source, const bench::CompileOptions& opts) {
  Options o;
  o.opt = opts.opt;
  o.march = opts.march;
  o.openmp = opts.openmp;
  o.entry = opts.entry;
  Result r = kernelc::compile(source, o);
  bench::CompiledKernel k;
  k.status = r.status;
  k.backend = name();
  k.diagnostics = r.diagnostics;
  k.entry = r.entry;
  k.compile_ms = r.compile_ms;
  k.external_symbols = r.external_symbols;
  k.code = r.code;
  k.features = std::move(r.features);
  return k;
}

nlohmann::json GccJitBackend::features(const std::string& source) {
  return kernelc::features(source);
}

}  // namespace kernelc
