// The front end's driver: preprocess and parse the prelude and the kernel, check the
// allow-list. No libgccjit here, so the fuzz target can build it alone.
#include <chrono>
#include <mutex>

#include "kernelc/ast.hpp"
#include "kernelc/walk.hpp"

namespace kernelc {

// Diagnostics hold `const char*` file names; they live for the process.
const char* intern(const std::string& s) {
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

void check_target(const Program& prog, const std::vector<std::string>& march);

void parse_source(const std::string& source, const Options& opts, Program& prog) {
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
  // Inline assembly is valid GNU C that this front end does not compile: gcc does, under
  // the sandbox's rules, so a kernel gets the same status whichever back end is chosen.
  for (const Token& t : user)
    if (t.is("asm") || t.is("__asm__") || t.is("__asm")) unsupported_at(t.loc, "inline assembly");
  toks.insert(toks.end(), std::make_move_iterator(user.begin()), std::make_move_iterator(user.end()));
  parse(std::move(toks), prog);
}

void check_program(const Program& prog, const Options& opts) {
  check_calls(prog);
  check_target(prog, opts.march);
}

// An intrinsic needs its instruction set enabled, as gcc insists (its intrinsics are
// always-inline functions with a target attribute). Skipped when the flags name a CPU
// this front end does not know, rather than guess.
void check_target(const Program& prog, const std::vector<std::string>& march) {
  static const std::set<std::string> known = {
      "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "haswell", "broadwell", "skylake", "alderlake",
      "znver1", "znver2", "znver3", "znver4", "raptorlake", "core-avx2", "skylake-avx512", "cascadelake",
      "cooperlake", "icelake-client", "icelake-server", "tigerlake", "sapphirerapids", "rocketlake",
      "emeraldrapids", "graniterapids", "cannonlake", "nehalem", "westmere", "sandybridge", "ivybridge"};
  for (const std::string& f : march)
    if (f.rfind("-march=", 0) == 0 && !known.count(f.substr(7))) return;
  std::set<std::string> isa;
  for (auto& [k, v] : target_macros(march)) isa.insert(k);
  const char* sandy_ivy[] = {"sandybridge", "ivybridge"};
  for (const std::string& f : march)
    for (const char* c : sandy_ivy)
      if (f == std::string("-march=") + c) isa.insert("__AVX__");
  for (Obj* fn : prog.globals) {
    if (!fn->is_function || !fn->body || fn->from_prelude) continue;
    walk(fn->body, [&](Node* n) {
      if (n->kind != Nd::call || !n->var || !n->var->from_prelude) return true;
      const std::string& name = n->var->name;
      const char* need = nullptr;
      if (name.rfind("_mm512_", 0) == 0) need = "__AVX512F__";
      else if (name.find("fmadd") != std::string::npos || name.find("fmsub") != std::string::npos) need = "__FMA__";
      else if (name.rfind("_mm256_", 0) == 0) need = "__AVX__";
      if (need && !isa.count(need))
        error_at(n->loc, "inlining failed in call to 'always_inline' '" + name + "': target specific option mismatch (the target flags do not enable " +
                             std::string(need).substr(2, std::string(need).size() - 4) + ")");
      return true;
    });
  }
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
    parse_source(source, opts, prog);
    check_program(prog, opts);
    r.status = Status::ok;
  } catch (const Error& e) {
    fail(r, e);
  }
  r.frontend_ms = r.compile_ms = ms_since(t0);
  return r;
}

}  // namespace kernelc
