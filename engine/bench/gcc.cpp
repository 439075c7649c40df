// The "gcc" back end: the system compiler driven as a subprocess into a shared object,
// inspected as a file, and only then loaded.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "bench/compiler.hpp"
#include "bench/elf.hpp"
#include "bench/process.hpp"

namespace bench {

namespace fs = std::filesystem;

namespace {

// Libraries a kernel object may depend on: what the driver links for -fopenmp -lm.
bool library_allowed(const std::string& soname) {
  for (const char* ok : {"libc.so.6", "libm.so.6", "libmvec.so.1", "libgomp.so.1", "libgcc_s.so.1",
                         "ld-linux-x86-64.so.2" /* __tls_get_addr */})
    if (soname == ok) return true;
  return false;
}

// A symbol a known library provides (so calling it is a library violation) rather than
// a function nobody defines (a link error of the kernel itself).
bool provided_by_a_library(const std::string& name) {
  for (const char* p : {"cblas_", "openblas_", "LAPACKE_", "mkl_", "goto_", "bli_"})
    if (name.rfind(p, 0) == 0) return true;
  // Fortran BLAS names: dgemm_, sgemm_, ...
  if (name.size() > 1 && name.back() == '_' && name.find("gemm") != std::string::npos) return true;
  return dlsym(RTLD_DEFAULT, name.c_str()) != nullptr;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

class GccBackend final : public Backend {
 public:
  const char* name() const override { return "gcc"; }

  CompiledKernel compile(const std::string& source, const CompileOptions& opts) override {
    auto t0 = std::chrono::steady_clock::now();
    CompiledKernel k;
    k.backend = "gcc";
    auto done = [&]() -> CompiledKernel& {
      k.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return k;
    };
    if (opts.opt != "O0" && opts.opt != "O1" && opts.opt != "O2" && opts.opt != "O3") {
      k.diagnostics = "gcc: unknown optimisation level '" + opts.opt + "'";
      return done();
    }

    // A directory of our own unless the caller gave one (the sandbox removes its own).
    std::string dir = opts.workdir;
    std::string own;
    if (dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/engine-gcc-XXXXXX";
      if (!mkdtemp(tmpl.data())) {
        k.diagnostics = std::string("gcc: cannot create a temporary directory: ") + std::strerror(errno);
        return done();
      }
      dir = own = tmpl;
    }
    struct RemoveDir {
      std::string d;
      ~RemoveDir() {
        std::error_code ec;
        if (!d.empty()) fs::remove_all(d, ec);
      }
    } remove_own{own};

    const std::string src = dir + "/kernel.c", so = dir + "/kernel.so";
    {
      std::ofstream f(src, std::ios::binary);
      f << source;
      if (!f) {
        k.diagnostics = "gcc: cannot write " + src;
        return done();
      }
    }
    // -nostartfiles: no crt init/fini code, so any constructor in the object is the
    // kernel's own and is refused below instead of running at load time.
    std::vector<std::string> argv = {"gcc", "-shared", "-fPIC", "-nostartfiles", "-" + opts.opt,
                                     "-fdiagnostics-color=never", "-o", "kernel.so", "kernel.c"};
    argv.insert(argv.begin() + 5, opts.march.begin(), opts.march.end());
    if (opts.openmp) argv.push_back("-fopenmp");
    argv.push_back("-lm");
    ProcessResult r;
    try {
      r = run_process(argv, {"TMPDIR=" + dir, "LC_ALL=C"}, dir);
    } catch (const std::exception& e) {
      k.diagnostics = e.what();
      return done();
    }
    k.diagnostics = r.output;
    if (r.status != 0) {
      if (k.diagnostics.empty()) k.diagnostics = "gcc failed without a message";
      return done();
    }

    ElfImports imp;
    try {
      imp = read_elf_imports(so);
    } catch (const std::exception& e) {
      k.diagnostics += e.what();
      return done();
    }
    k.external_symbols = imp.undefined;
    std::vector<std::string> forbidden, undefined;
    for (const auto& s : imp.undefined)
      if (!symbol_allowed(s)) (provided_by_a_library(s) ? forbidden : undefined).push_back(s);
    std::vector<std::string> libs;
    for (const auto& l : imp.needed)
      if (!library_allowed(l)) libs.push_back(l);
    if (!forbidden.empty() || !libs.empty() || !imp.load_time_code.empty()) {
      k.status = CompileStatus::library_violation;
      if (!forbidden.empty())
        k.diagnostics += "kernel.c: error: calls " + join(forbidden) +
                         ", outside the allowed libraries (libm, OpenMP, memory allocation, "
                         "memset/memcpy/memmove)\n";
      if (!libs.empty()) k.diagnostics += "kernel.c: error: depends on " + join(libs) + "\n";
      if (!imp.load_time_code.empty())
        k.diagnostics += "kernel.c: error: defines " + join(imp.load_time_code) +
                         ", code that would run when the kernel is loaded\n";
      return done();
    }
    if (!undefined.empty()) {
      for (const auto& s : undefined) k.diagnostics += "kernel.c: error: undefined reference to `" + s + "'\n";
      return done();
    }
    if (std::find(imp.functions.begin(), imp.functions.end(), opts.entry) == imp.functions.end()) {
      k.diagnostics += "kernel.c: error: no function named '" + opts.entry + "' is defined\n";
      return done();
    }
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      k.diagnostics += std::string("cannot load the kernel: ") + (e ? e : "unknown error") + "\n";
      return done();
    }
    k.code = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
    k.entry = dlsym(handle, opts.entry.c_str());
    if (!k.entry) {
      k.diagnostics += "kernel.c: error: '" + opts.entry + "' cannot be resolved\n";
      k.code.reset();
      return done();
    }
    k.status = CompileStatus::ok;
    return done();
  }
};

}  // namespace

std::unique_ptr<Backend> make_gcc_backend() { return std::make_unique<GccBackend>(); }

}  // namespace bench
