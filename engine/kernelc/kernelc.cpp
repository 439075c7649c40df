// The driver: the front end (front.cpp), then libgccjit; the first error becomes the
// result's diagnostic.
#include <dlfcn.h>
#include <libgccjit.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>

#include "compile/compiler.hpp"
#include "compile/elf_reader.hpp"
#include "kernelc/ast.hpp"
#include "kernelc/lower.hpp"

namespace kernelc {

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

static void fail(Result& r, const Error& e) {
  r.status = e.kind;
  r.diagnostics = format_diagnostic(e);
}

namespace {
struct Context {
  gcc_jit_context* ctx = gcc_jit_context_acquire();
  ~Context() { gcc_jit_context_release(ctx); }
};
// A private directory for the linked object, removed with what is in it.
struct TempDir {
  std::string path;
  TempDir() {
    const char* t = getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/kernelc-XXXXXX";
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    if (path.empty()) return;
    unlink((path + "/kernel.so").c_str());
    rmdir(path.c_str());
  }
};
}  // namespace

// Compiled code that uses OpenMP holds libgomp only while it is loaded; libgomp's
// worker threads outlive it, so unloading libgomp with the code would pull their code
// from under them. Pin it for the life of the process.
static void pin_libgomp() {
  static void* handle = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  (void)handle;
}

Result compile(const std::string& source, const Options& opts) {
  Result r;
  if (opts.openmp) pin_libgomp();
  auto t0 = Clock::now();
  try {
    for (const std::string& m : opts.march)
      if (m == "-march=native" || m == "-mtune=native")
        throw Error(Status::compile_error, Loc{intern(opts.file), 0, 0}, "'" + m + "' is not accepted by libgccjit; pass the host's explicit target flags");
    if (!bench::optimisation_level_known(opts.opt))
      throw Error(Status::compile_error, Loc{intern(opts.file), 0, 0}, bench::optimisation_level_message(opts.opt));
    Program prog;
    try {
      parse_source(source, opts, prog);
    } catch (const Error& e) {
      r.features = nlohmann::json{{"error", format_diagnostic(e)}};
      throw;
    }
    r.features = program_features(prog);
    check_program(prog, opts);
    Context c;
    gcc_jit_context* ctx = c.ctx;
    gcc_jit_context_set_int_option(ctx, GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, opts.opt == "Os" ? 2 : opts.opt[1] - '0');
    if (opts.opt == "Os") gcc_jit_context_add_command_line_option(ctx, "-Os");
    gcc_jit_context_set_bool_allow_unreachable_blocks(ctx, 1);
    gcc_jit_context_set_bool_print_errors_to_stderr(ctx, 0);
    // gcc's defaults for GNU C, which libgccjit (a language of its own) does not assume
    gcc_jit_context_add_command_line_option(ctx, "-ffp-contract=fast");
    for (const std::string& m : opts.march) gcc_jit_context_add_command_line_option(ctx, m.c_str());
    if (getenv("KERNELC_DUMP_ASM")) gcc_jit_context_set_bool_option(ctx, GCC_JIT_BOOL_OPTION_DUMP_GENERATED_CODE, 1);
    if (getenv("KERNELC_TIME_REPORT")) gcc_jit_context_add_command_line_option(ctx, "-ftime-report");  // to stderr
    if (!opts.remarks_file.empty())
      gcc_jit_context_add_command_line_option(ctx, bench::remarks_flag(opts.remarks_file).c_str());
    // Linked against what the kernel may call and nothing else: no start files, and no
    // libc, which the process loading the kernel has (reading libc.so and the default
    // libraries took a third of every link: perf/bench/compile_cost_bench.lua).
    gcc_jit_context_add_driver_option(ctx, "-nostdlib");
    if (opts.openmp) gcc_jit_context_add_driver_option(ctx, "-lgomp");
    gcc_jit_context_add_driver_option(ctx, "-lm");
    gcc_jit_context_add_driver_option(ctx, "-lgcc");  // gcc's own helpers (128-bit division)
    Lowerer low(ctx, prog);
    low.program(opts.entry);
    r.frontend_ms = ms_since(t0);
    // Linked into a file and read before it is loaded: loading runs the object's
    // DT_INIT (a function named _init), constructors and the like, and no code of the
    // kernel's may run before its first call. The same rule as the gcc back end's
    // (bench::load_time_violations), on the same kind of object.
    TempDir dir;
    if (dir.path.empty()) throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, "cannot make a directory for the linked kernel");
    const std::string so = dir.path + "/kernel.so";
    gcc_jit_context_compile_to_file(ctx, GCC_JIT_OUTPUT_KIND_DYNAMIC_LIBRARY, so.c_str());
    if (!opts.remarks_file.empty()) r.remarks = bench::read_remarks(opts.remarks_file);
    if (const char* err = gcc_jit_context_get_first_error(ctx); err || access(so.c_str(), R_OK) != 0)
      throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, std::string("libgccjit rejected the lowered program: ") + (err ? err : "no object written"));
    bench::ElfImports imp;
    try {
      imp = bench::read_elf_imports(so);
    } catch (const std::exception& e) {
      throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, std::string("the linked kernel cannot be read: ") + e.what());
    }
    if (auto load_time = bench::load_time_violations(imp); !load_time.empty())
      throw Error(Status::library_violation, Loc{intern(opts.file), 1, 1}, bench::load_time_message(load_time));
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, std::string("cannot load the kernel: ") + (e ? e : "unknown error"));
    }
    r.code = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
    r.entry = dlsym(handle, opts.entry.c_str());
    if (!r.entry) throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, "entry '" + opts.entry + "' missing from the compiled code");
    r.external_symbols.assign(low.externals.begin(), low.externals.end());
    r.status = Status::ok;
  } catch (const Error& e) {
    fail(r, e);
    r.code.reset();
    r.entry = nullptr;
  }
  r.compile_ms = ms_since(t0);
  if (r.frontend_ms == 0) r.frontend_ms = r.compile_ms;
  return r;
}

}  // namespace kernelc
