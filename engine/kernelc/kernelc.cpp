// The driver: runs the passes in order and turns the first error into a diagnostic.
#include <dlfcn.h>
#include <libgccjit.h>

#include <chrono>
#include <mutex>

#include "kernelc/ast.hpp"
#include "kernelc/lower.hpp"

namespace kernelc {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::compile_error: return "compile_error";
    case Status::library_violation: return "library_violation";
    case Status::unsupported: return "unsupported";
  }
  return "?";
}

// Diagnostics hold `const char*` file names; they live for the process.
static const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> g(mu);
  return names.insert(s).first->c_str();
}

std::vector<std::pair<std::string, std::string>> target_macros(const std::vector<std::string>& march) {
  std::set<std::string> isa = {"SSE", "SSE2"};
  const std::set<std::string> v2 = {"SSE3", "SSSE3", "SSE4_1", "SSE4_2", "POPCNT"};
  const std::set<std::string> v3 = {"AVX", "AVX2", "FMA", "BMI", "BMI2", "F16C"};
  const std::set<std::string> v4 = {"AVX512F", "AVX512CD", "AVX512VL", "AVX512BW", "AVX512DQ"};
  const std::set<std::string> l3 = {"haswell", "broadwell", "skylake", "alderlake", "znver1", "znver2", "znver3", "x86-64-v3", "raptorlake", "core-avx2"};
  const std::set<std::string> l4 = {"skylake-avx512", "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake",
                                    "sapphirerapids", "rocketlake", "znver4", "x86-64-v4", "emeraldrapids", "graniterapids", "cannonlake"};
  auto add = [&](const std::set<std::string>& s) { isa.insert(s.begin(), s.end()); };
  for (const std::string& f : march) {
    if (f.rfind("-march=", 0) == 0) {
      std::string cpu = f.substr(7);
      if (cpu == "x86-64-v2" || l3.count(cpu) || l4.count(cpu)) add(v2);
      if (l3.count(cpu) || l4.count(cpu)) add(v3);
      if (l4.count(cpu)) add(v4);
    } else if (f.rfind("-mno-", 0) == 0) {
      std::string x = f.substr(5);
      for (auto& ch : x) ch = (char)toupper(ch);
      std::replace(x.begin(), x.end(), '.', '_');
      isa.erase(x);
    } else if (f.rfind("-m", 0) == 0) {
      std::string x = f.substr(2);
      for (auto& ch : x) ch = (char)toupper(ch);
      std::replace(x.begin(), x.end(), '.', '_');
      isa.insert(x);
      if (x.rfind("AVX512", 0) == 0) { add(v2); isa.insert({"AVX", "AVX2", "AVX512F"}); }
      if (x == "AVX2") isa.insert("AVX");
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& i : isa) out.push_back({"__" + i + "__", "1"});
  return out;
}

// The prelude preprocessed once per process: it depends on no option, and its macros
// are its own business.
const std::vector<Token>& prelude_tokens() {
  static const std::vector<Token> toks = [] {
    std::vector<Token> t = preprocess(tokenize(prelude_source(), "<prelude>"), PreprocessOptions{});
    t.pop_back();  // eof
    return t;
  }();
  return toks;
}

// Preprocess and parse the prelude and the kernel; check the allow-list.
static void front(const std::string& source, const Options& opts, Program& prog) {
  PreprocessOptions po;
  po.defines = {{"__STDC__", "1"}, {"__STDC_VERSION__", "201112L"}, {"__STDC_HOSTED__", "1"}, {"__x86_64__", "1"},
                {"__x86_64", "1"}, {"__linux__", "1"}, {"__GNUC__", "12"}, {"__GNUC_MINOR__", "2"}, {"__LP64__", "1"},
                {"__SIZEOF_POINTER__", "8"}, {"__SIZEOF_LONG__", "8"}, {"__SIZEOF_INT__", "4"}, {"__SIZEOF_DOUBLE__", "8"},
                {"__CHAR_BIT__", "8"}, {"__kernelc__", "1"}};
  if (opts.opt != "O0") po.defines.push_back({"__OPTIMIZE__", "1"});
  if (opts.openmp) po.defines.push_back({"_OPENMP", "201511"});
  for (auto& d : target_macros(opts.march)) po.defines.push_back(d);
  std::vector<Token> toks = prelude_tokens();
  std::vector<Token> user = preprocess(tokenize(source, intern(opts.file)), po);
  toks.insert(toks.end(), std::make_move_iterator(user.begin()), std::make_move_iterator(user.end()));
  parse(std::move(toks), prog);
  check_calls(prog);
}

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

static void fail(Result& r, const Error& e) {
  r.status = e.kind;
  r.diagnostics = format_diagnostic(e);
}

Result check(const std::string& source, const Options& opts) {
  Result r;
  auto t0 = Clock::now();
  try {
    Program prog;
    front(source, opts, prog);
    r.status = Status::ok;
  } catch (const Error& e) {
    fail(r, e);
  }
  r.frontend_ms = r.compile_ms = ms_since(t0);
  return r;
}

namespace {
struct Context {
  gcc_jit_context* ctx = gcc_jit_context_acquire();
  ~Context() { gcc_jit_context_release(ctx); }
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
    static const std::set<std::string> levels = {"O0", "O1", "O2", "O3", "Os"};
    if (!levels.count(opts.opt)) throw Error(Status::compile_error, Loc{intern(opts.file), 0, 0}, "unknown optimization level '" + opts.opt + "'");
    Program prog;
    front(source, opts, prog);
    Context c;
    gcc_jit_context* ctx = c.ctx;
    gcc_jit_context_set_int_option(ctx, GCC_JIT_INT_OPTION_OPTIMIZATION_LEVEL, opts.opt == "Os" ? 2 : opts.opt[1] - '0');
    if (opts.opt == "Os") gcc_jit_context_add_command_line_option(ctx, "-Os");
    gcc_jit_context_set_bool_allow_unreachable_blocks(ctx, 1);
    gcc_jit_context_set_bool_print_errors_to_stderr(ctx, 0);
    for (const std::string& m : opts.march) gcc_jit_context_add_command_line_option(ctx, m.c_str());
    if (opts.openmp) gcc_jit_context_add_driver_option(ctx, "-lgomp");
    gcc_jit_context_add_driver_option(ctx, "-lm");
    Lowerer low(ctx, prog);
    low.program(opts.entry);
    r.frontend_ms = ms_since(t0);
    // libgccjit writes its .s and .so in a fresh mkdtemp directory of its own and
    // removes it when the compile ends.
    gcc_jit_result* res = gcc_jit_context_compile(ctx);
    if (!res) {
      const char* err = gcc_jit_context_get_first_error(ctx);
      throw Error(Status::unsupported, Loc{intern(opts.file), 1, 1}, std::string("libgccjit rejected the lowered program: ") + (err ? err : "unknown error"));
    }
    r.code = std::shared_ptr<void>(res, [](void* p) { gcc_jit_result_release(static_cast<gcc_jit_result*>(p)); });
    r.entry = gcc_jit_result_get_code(res, opts.entry.c_str());
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
