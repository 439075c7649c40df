#include "host/bind.hpp"

#include <algorithm>
#include <cmath>

namespace host {

void set_number(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}

void push_strings(lua_State* L, const std::vector<std::string>& v) {
  push_array(L, v, [L](const std::string& s) { lua_pushlstring(L, s.data(), s.size()); });
}

void set_string(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}

void push_current_exception(lua_State* L) {
  try {
    throw;
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
  } catch (...) {
    lua_pushliteral(L, "unknown C++ exception");
  }
}

void set_functions(lua_State* L, std::initializer_list<Function> fns) {
  for (const auto& f : fns) {
    lua_pushcfunction(L, f.fn);
    lua_setfield(L, -2, f.name);
  }
}

static std::string describe(const char* where, const char* what) {
  return std::string(where) + ": " + what;
}

static Error type_error(lua_State* L, int idx, const char* where, const char* what,
                        const char* expected) {
  return Error(describe(where, what) + " must be " + expected + ", got " + luaL_typename(L, idx));
}

std::string check_string(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_type(L, idx) != LUA_TSTRING && lua_type(L, idx) != LUA_TNUMBER)
    throw type_error(L, idx, where, what, "a string");
  size_t n = 0;
  const char* s = lua_tolstring(L, idx, &n);
  return std::string(s, n);
}

double check_number(lua_State* L, int idx, const char* where, const char* what) {
  int ok = 0;
  double v = lua_tonumberx(L, idx, &ok);
  if (!ok || lua_type(L, idx) != LUA_TNUMBER) throw type_error(L, idx, where, what, "a number");
  return v;
}

int64_t check_integer(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_type(L, idx) != LUA_TNUMBER) throw type_error(L, idx, where, what, "an integer");
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok) throw Error(describe(where, what) + " must be an integer, got " +
                       std::to_string(lua_tonumber(L, idx)));
  return v;
}

bool check_boolean(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_type(L, idx) != LUA_TBOOLEAN) throw type_error(L, idx, where, what, "a boolean");
  return lua_toboolean(L, idx);
}

void check_table(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_type(L, idx) != LUA_TTABLE) throw type_error(L, idx, where, what, "a table");
}

std::optional<std::string> opt_string(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_isnoneornil(L, idx)) return std::nullopt;
  return check_string(L, idx, where, what);
}

std::optional<double> opt_number(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_isnoneornil(L, idx)) return std::nullopt;
  return check_number(L, idx, where, what);
}

std::optional<int64_t> opt_integer(lua_State* L, int idx, const char* where, const char* what) {
  if (lua_isnoneornil(L, idx)) return std::nullopt;
  return check_integer(L, idx, where, what);
}

std::vector<std::string> check_string_list(lua_State* L, int idx, const char* where,
                                           const char* what) {
  idx = lua_absindex(L, idx);
  check_table(L, idx, where, what);
  std::vector<std::string> out;
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, idx, i);
    std::string item = std::string(what) + "[" + std::to_string(i) + "]";
    if (lua_type(L, -1) != LUA_TSTRING) {
      std::string got = luaL_typename(L, -1);
      lua_pop(L, 1);
      throw Error(describe(where, item.c_str()) + " must be a string, got " + got);
    }
    size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    out.emplace_back(s, n);  // strings may hold NUL bytes
    lua_pop(L, 1);
  }
  return out;
}

// ---- Options --------------------------------------------------------------

Options::Options(lua_State* L, int idx, const char* where)
    : L_(L), idx_(lua_isnoneornil(L, idx) ? 0 : lua_absindex(L, idx)), where_(where) {
  if (idx_ && lua_type(L, idx_) != LUA_TTABLE)
    throw Error(std::string(where) + ": options must be a table, got " + luaL_typename(L, idx_));
}

bool Options::fetch(const char* key) {
  known_.emplace_back(key);
  if (!idx_) return false;
  lua_getfield(L_, idx_, key);
  if (lua_isnil(L_, -1)) {
    lua_pop(L_, 1);
    return false;
  }
  return true;
}

bool Options::has(const char* key) {
  if (!idx_) return false;
  lua_getfield(L_, idx_, key);
  bool present = !lua_isnil(L_, -1);
  lua_pop(L_, 1);
  return present;
}

void Options::push(const char* key) {
  if (!fetch(key)) lua_pushnil(L_);
}

#define OPTION_NAME (std::string("option '") + key + "'").c_str()

void Options::get(const char* key, std::string& out, std::initializer_list<const char*> choices) {
  if (!fetch(key)) return;
  std::string v;
  try {
    v = check_string(L_, -1, where_, OPTION_NAME);
  } catch (...) {
    lua_pop(L_, 1);
    throw;
  }
  lua_pop(L_, 1);
  if (choices.size() &&
      std::none_of(choices.begin(), choices.end(), [&](const char* c) { return v == c; })) {
    std::string list;
    for (const char* c : choices) list += std::string(list.empty() ? "" : ", ") + '"' + c + '"';
    throw Error(std::string(where_) + ": option '" + key + "' is \"" + v + "\"; expected one of " +
                list);
  }
  out = std::move(v);
}

template <class T, class F>
static void read_with(lua_State* L, F&& check, T& out) {
  try {
    out = check();
  } catch (...) {
    lua_pop(L, 1);
    throw;
  }
  lua_pop(L, 1);
}

void Options::get(const char* key, double& out) {
  if (fetch(key)) read_with(L_, [&] { return check_number(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, int64_t& out) {
  if (fetch(key)) read_with(L_, [&] { return check_integer(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, int& out) {
  int64_t v = out;
  get(key, v);
  out = static_cast<int>(v);
}
void Options::get(const char* key, bool& out) {
  if (fetch(key)) read_with(L_, [&] { return check_boolean(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, std::optional<std::string>& out) {
  if (fetch(key)) read_with(L_, [&] { return check_string(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, std::optional<double>& out) {
  if (fetch(key)) read_with(L_, [&] { return check_number(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, std::optional<int64_t>& out) {
  if (fetch(key)) read_with(L_, [&] { return check_integer(L_, -1, where_, OPTION_NAME); }, out);
}
void Options::get(const char* key, std::vector<std::string>& out) {
  if (fetch(key))
    read_with(L_, [&] { return check_string_list(L_, -1, where_, OPTION_NAME); }, out);
}

void Options::done() {
  if (!idx_) return;
  lua_pushnil(L_);
  while (lua_next(L_, idx_)) {
    lua_pop(L_, 1);
    std::string key = lua_type(L_, -1) == LUA_TSTRING ? lua_tostring(L_, -1) : "";
    if (lua_type(L_, -1) != LUA_TSTRING ||
        std::find(known_.begin(), known_.end(), key) == known_.end()) {
      if (lua_type(L_, -1) != LUA_TSTRING) key = std::string("[") + luaL_typename(L_, -1) + "]";
      lua_pop(L_, 1);
      std::string list;
      for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
      throw Error(std::string(where_) + ": unknown option '" + key + "' (known: " + list + ")");
    }
  }
}

}  // namespace host
