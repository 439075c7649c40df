// engine.sys: the few operating-system facts scripts need and plain Lua lacks.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "files/clock.hpp"
#include "files/cores.hpp"
#include "host/blas_kernels.hpp"
#include "host/bind.hpp"

namespace host {

static int sys_now(lua_State* L) {
  lua_pushnumber(L, files::monotonic_seconds());
  return 1;
}

static int sys_time(lua_State* L) {
  using namespace std::chrono;
  lua_pushnumber(L, duration<double>(system_clock::now().time_since_epoch()).count());
  return 1;
}

static int sys_sleep(lua_State* L) {
  double s = check_number(L, 1, "sys.sleep", "seconds");
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
  return 0;
}

// isatty("stdout"|"stderr"|"stdin")
static int sys_isatty(lua_State* L) {
  std::string which = opt_string(L, 1, "sys.isatty", "stream").value_or("stdout");
  int fd = which == "stdin" ? 0 : which == "stdout" ? 1 : which == "stderr" ? 2 : -1;
  if (fd < 0) throw Error("sys.isatty: stream must be \"stdin\", \"stdout\" or \"stderr\"");
  lua_pushboolean(L, isatty(fd));
  return 1;
}

static int sys_pid(lua_State* L) {
  lua_pushinteger(L, getpid());
  return 1;
}

static int sys_cpu_count(lua_State* L) {
  lua_pushinteger(L, files::usable_cores());
  return 1;
}

static int sys_mkdir(lua_State* L) {
  std::string dir = check_string(L, 1, "sys.mkdir", "path");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("sys.mkdir: cannot create " + dir + ": " + ec.message());
  return 0;
}

static int sys_exists(lua_State* L) {
  std::error_code ec;
  lua_pushboolean(L, std::filesystem::exists(check_string(L, 1, "sys.exists", "path"), ec));
  return 1;
}

static int sys_listdir(lua_State* L) {
  std::string dir = check_string(L, 1, "sys.listdir", "path");
  std::error_code ec;
  std::vector<std::string> names;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw Error("sys.listdir: cannot read " + dir + ": " + ec.message());
  std::sort(names.begin(), names.end());
  lua_createtable(L, static_cast<int>(names.size()), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    lua_pushstring(L, names[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// The kernels OpenBLAS runs ("SkylakeX", ...), nil without OpenBLAS; and, when the engine
// chose them because OpenBLAS read the CPU as an older kind, that kind.
static int sys_openblas(lua_State* L) {
  std::string core = openblas_core();
  if (core.empty()) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushstring(L, core.c_str());
  const char* read_as = std::getenv("ENGINE_OPENBLAS_READ_AS");
  if (read_as) lua_pushstring(L, read_as);
  else lua_pushnil(L);
  return 2;
}

int open_sys(lua_State* L) {
  lua_newtable(L);
  set_functions(L, {HOST_FN("now", sys_now), HOST_FN("time", sys_time),
                    HOST_FN("sleep", sys_sleep), HOST_FN("isatty", sys_isatty),
                    HOST_FN("pid", sys_pid), HOST_FN("cpu_count", sys_cpu_count),
                    HOST_FN("mkdir", sys_mkdir), HOST_FN("exists", sys_exists),
                    HOST_FN("listdir", sys_listdir), HOST_FN("openblas", sys_openblas)});
  return 1;
}

}  // namespace host
