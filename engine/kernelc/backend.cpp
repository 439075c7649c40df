#include "kernelc/backend.hpp"

#include <unistd.h>

#include <cstdlib>

#include "kernelc/kernelc.hpp"

namespace kernelc {

bench::CompiledKernel GccJitBackend::compile(const std::string& source, const bench::CompileOptions& opts) {
  Options o;
  o.opt = opts.opt;
  o.march = opts.march;
  o.openmp = opts.openmp;
  o.entry = opts.entry;
  // The remarks go to a file of the caller's private directory, else to one of our own.
  std::string own;
  if (!opts.workdir.empty()) {
    o.remarks_file = opts.workdir + "/remarks.txt";
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/engine-remarks-XXXXXX";
    int fd = mkstemp(tmpl.data());
    if (fd >= 0) {
      close(fd);
      o.remarks_file = own = tmpl;
    }
  }
  Result r = kernelc::compile(source, o);
  if (!own.empty()) unlink(own.c_str());
  bench::CompiledKernel k;
  k.status = r.status;
  k.backend = name();
  k.diagnostics = r.diagnostics;
  k.entry = r.entry;
  k.compile_ms = r.compile_ms;
  k.external_symbols = r.external_symbols;
  k.code = r.code;
  k.features = std::move(r.features);
  k.remarks = std::move(r.remarks);
  return k;
}

nlohmann::json GccJitBackend::features(const std::string& source) {
  return kernelc::features(source);
}

}  // namespace kernelc
