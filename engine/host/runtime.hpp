// The Lua runtime the engine runs scripts in: a state with the standard libraries, the
// engine's modules (`require "engine.store"`, also the globals `store`, ...), and
// package.path pointing at stdlib/ and scripts/lib/.
#pragma once

#include <lua.hpp>

#include <string>
#include <vector>

#include "host/paths.hpp"

namespace host {

// A module: `require(name)` calls open, which returns the module table (nullptr: a Lua
// module of stdlib/); global is the short name scripts see without a require (nullptr:
// none).
struct Module {
  const char* name;
  const char* global;
  lua_CFunction open;
};

// The modules linked into this engine, in registration order.
const std::vector<Module>& modules();

class Runtime {
 public:
  explicit Runtime(Paths paths);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  lua_State* L() const { return L_; }
  const Paths& paths() const { return paths_; }

  // Sets the global `arg` as the standalone lua does: arg[0] = script, arg[-1] = engine.
  void set_args(const std::string& engine, const std::string& script,
                const std::vector<std::string>& args);

  // Each returns true on success; on failure the message, with a traceback, went to stderr.
  bool run_file(const std::string& path, const std::vector<std::string>& args);
  bool run_string(const std::string& code, const std::string& chunkname);
  bool require(const std::string& module, const std::string& global);

  // Calls the function below nargs arguments in protected mode with a traceback handler
  // and Ctrl-C turned into a Lua error. Returns the lua_pcall status; the error message is
  // left on the stack.
  int call(int nargs, int nresults);

 private:
  lua_State* L_;
  Paths paths_;
};

void report_error(lua_State* L, const char* program);

}  // namespace host
