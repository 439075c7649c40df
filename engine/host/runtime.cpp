#include "host/runtime.hpp"

#include <csignal>
#include <cstdio>
#include <stdexcept>

#include "host/bind.hpp"

namespace host {

int open_bench(lua_State* L);
int open_cluster(lua_State* L);
int open_json(lua_State* L);
int open_kernelc(lua_State* L);
int open_log(lua_State* L);
int open_store(lua_State* L);
int open_sys(lua_State* L);
int open_tokenizer(lua_State* L);
int open_policy(lua_State* L);
int open_train(lua_State* L);

const std::vector<Module>& modules() {
  static const std::vector<Module> list = {
      {"engine.sys", "sys", guarded<open_sys>},
      {"engine.json", "json", guarded<open_json>},
      {"engine.log", "log", guarded<open_log>},
      {"engine.store", "store", guarded<open_store>},
      // The evaluation's primitives; engine.bench (stdlib/engine/bench.lua) is they with a
      // task of the suite resolved in Lua, so C++ never calls back for a spec.
      {"engine.bench_core", nullptr, guarded<open_bench>},
      {"engine.bench", "bench", nullptr},
      {"engine.cluster", "cluster", guarded<open_cluster>},
      {"engine.tokenizer", "tokenizer", guarded<open_tokenizer>},
      {"engine.policy", "policy", guarded<open_policy>},
      {"engine.train", "train", guarded<open_train>},
      {"engine.kernelc", "kernelc", guarded<open_kernelc>},
  };
  return list;
}

// ---- Ctrl-C ---------------------------------------------------------------
// As in lua.c: the signal handler only installs a hook; the hook raises the error at the
// next safe point of the interpreter.
static lua_State* interrupted_state = nullptr;

static void stop_hook(lua_State* L, lua_Debug*) {
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

static void on_sigint(int sig) {
  std::signal(sig, SIG_DFL);  // a second Ctrl-C kills a chunk stuck in C code
  if (interrupted_state)
    lua_sethook(interrupted_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int traceback(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int Runtime::call(int nargs, int nresults) {
  int base = lua_gettop(L_) - nargs;
  lua_pushcfunction(L_, traceback);
  lua_insert(L_, base);
  interrupted_state = L_;
  auto previous = std::signal(SIGINT, on_sigint);
  int status = lua_pcall(L_, nargs, nresults, base);
  std::signal(SIGINT, previous);
  interrupted_state = nullptr;
  lua_remove(L_, base);
  return status;
}

void report_error(lua_State* L, const char* program) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "%s: %s\n", program, msg ? msg : "(error without message)");
  std::fflush(stderr);
  lua_pop(L, 1);
}

// ---- state ----------------------------------------------------------------

static void set_package_path(lua_State* L, const std::string& ours) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  std::string path = ours + ";" + lua_tostring(L, -1);
  lua_pop(L, 1);
  lua_pushstring(L, path.c_str());
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
}

static void register_modules(lua_State* L) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  for (const auto& m : modules()) {
    if (!m.open) continue;  // a Lua module of stdlib/, found on package.path
    lua_pushcfunction(L, m.open);
    lua_setfield(L, -2, m.name);
  }
  lua_pop(L, 2);
}

Runtime::Runtime(Paths paths) : L_(luaL_newstate()), paths_(std::move(paths)) {
  if (!L_) throw std::runtime_error("cannot create a Lua state: out of memory");
  luaL_openlibs(L_);
  set_package_path(L_, paths_.lua_path);
  register_modules(L_);
  // Paths the scripts may need (the default model, the experiments).
  lua_newtable(L_);
  lua_pushstring(L_, paths_.root.c_str());
  lua_setfield(L_, -2, "root");
  lua_pushstring(L_, paths_.models.c_str());
  lua_setfield(L_, -2, "models");
  lua_newtable(L_);
  for (size_t i = 0; i < paths_.script_dirs.size(); ++i) {
    lua_pushstring(L_, paths_.script_dirs[i].c_str());
    lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L_, -2, "scripts");
  lua_pushliteral(L_, ENGINE_VERSION);
  lua_setfield(L_, -2, "version");
  lua_setglobal(L_, "engine");
  for (const auto& m : modules())
    if (m.global && !require(m.name, m.global))
      throw std::runtime_error(std::string("cannot load module ") + m.name);
}

Runtime::~Runtime() { lua_close(L_); }

bool Runtime::require(const std::string& module, const std::string& global) {
  lua_getglobal(L_, "require");
  lua_pushstring(L_, module.c_str());
  if (call(1, 1) != LUA_OK) {
    report_error(L_, "engine");
    return false;
  }
  if (global.empty()) lua_pop(L_, 1);
  else lua_setglobal(L_, global.c_str());
  return true;
}

void Runtime::set_args(const std::string& engine, const std::string& script,
                       const std::vector<std::string>& args) {
  lua_createtable(L_, static_cast<int>(args.size()), 2);
  lua_pushstring(L_, engine.c_str());
  lua_rawseti(L_, -2, -1);
  lua_pushstring(L_, script.c_str());
  lua_rawseti(L_, -2, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    lua_pushstring(L_, args[i].c_str());
    lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setglobal(L_, "arg");
}

bool Runtime::run_file(const std::string& path, const std::vector<std::string>& args) {
  int status = luaL_loadfile(L_, path.c_str());
  if (status == LUA_OK) {
    for (const auto& a : args) lua_pushstring(L_, a.c_str());
    status = call(static_cast<int>(args.size()), 0);
  }
  if (status != LUA_OK) report_error(L_, "engine");
  return status == LUA_OK;
}

bool Runtime::run_string(const std::string& code, const std::string& chunkname) {
  int status = luaL_loadbuffer(L_, code.data(), code.size(), chunkname.c_str());
  if (status == LUA_OK) status = call(0, 0);
  if (status != LUA_OK) report_error(L_, "engine");
  return status == LUA_OK;
}

}  // namespace host
