// engine.kernelc: the kernel-C front end (engine/kernelc) for scripts.
//
//   local f = kernelc.features(src)            -- techniques, from the syntax tree
//   local r = kernelc.compile_check(src, {opt = "O3", march = {"-march=x86-64-v4"}})
//   -- r.status: "ok" | "compile_error" | "library_violation" | "unsupported"
//   -- r.diagnostics, r.compile_ms, r.frontend_ms, r.external_symbols
#include "compile/compiler.hpp"
#include "host/bind.hpp"
#include "host/luajson.hpp"
#include "kernelc/kernelc.hpp"

namespace host {

static int kernelc_features(lua_State* L) {
  std::string src = check_string(L, 1, "kernelc.features", "source");
  push_json(L, kernelc::features(src));
  return 1;
}

// Compiles (or, with front_only, only parses and checks) and reports; the code itself
// is released at once.
static int kernelc_compile_check(lua_State* L) {
  std::string src = check_string(L, 1, "kernelc.compile_check", "source");
  kernelc::Options o;
  bool front_only = false;
  Options opt(L, 2, "kernelc.compile_check");
  opt.get("opt", o.opt);
  if (!bench::optimisation_level_known(o.opt))
    throw Error(std::string("kernelc.compile_check: ") + bench::optimisation_level_message(o.opt));
  opt.get("march", o.march);
  opt.get("entry", o.entry);
  opt.get("openmp", o.openmp);
  opt.get("front_only", front_only);
  opt.done();
  kernelc::Result r = front_only ? kernelc::check(src, o) : kernelc::compile(src, o);
  Json j = {{"status", bench::to_string(r.status)},
            {"diagnostics", r.diagnostics},
            {"compile_ms", r.compile_ms},
            {"frontend_ms", r.frontend_ms},
            {"external_symbols", r.external_symbols}};
  push_json(L, j);
  return 1;
}

int open_kernelc(lua_State* L) {
  lua_newtable(L);
  set_functions(L, {HOST_FN("features", kernelc_features), HOST_FN("compile_check", kernelc_compile_check)});
  return 1;
}

}  // namespace host
