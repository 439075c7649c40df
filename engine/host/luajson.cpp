#include "host/luajson.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "host/bind.hpp"

namespace host {

static const char* kArrayMark = "engine.json.array";
static char null_key;  // its address is the null sentinel

void push_json_null(lua_State* L) { lua_pushlightuserdata(L, &null_key); }

bool is_json_null(lua_State* L, int idx) {
  return lua_islightuserdata(L, idx) && lua_touserdata(L, idx) == &null_key;
}

void mark_array(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (luaL_newmetatable(L, kArrayMark)) {
    lua_pushstring(L, "array");
    lua_setfield(L, -2, "__jsontype");
  }
  lua_setmetatable(L, idx);
}

static bool has_array_mark(lua_State* L, int idx) {
  if (!lua_getmetatable(L, idx)) return false;
  luaL_getmetatable(L, kArrayMark);
  bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

namespace {

struct Encoder {
  lua_State* L;
  std::vector<const void*> open;  // tables being encoded, to catch cycles

  Json value(int idx, const std::string& path) {
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
      case LUA_TNIL: return nullptr;
      case LUA_TBOOLEAN: return static_cast<bool>(lua_toboolean(L, idx));
      case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) return static_cast<int64_t>(lua_tointeger(L, idx));
        if (!std::isfinite(lua_tonumber(L, idx))) return nullptr;  // JSON has no inf/nan
        return lua_tonumber(L, idx);
      case LUA_TSTRING: {
        size_t n;
        const char* s = lua_tolstring(L, idx, &n);
        return std::string(s, n);
      }
      case LUA_TLIGHTUSERDATA:
        if (is_json_null(L, idx)) return nullptr;
        break;
      case LUA_TTABLE: return table(idx, path);
      default: break;
    }
    throw Error(path + ": cannot be written as JSON (a " + luaL_typename(L, idx) + ")");
  }

  Json table(int idx, const std::string& path) {
    const void* p = lua_topointer(L, idx);
    for (const void* q : open)
      if (q == p) throw Error(path + ": table contains itself; JSON cannot hold cycles");
    open.push_back(p);
    lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
    size_t count = 0;
    bool all_index_keys = true;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      ++count;
      if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > n)
        all_index_keys = false;
      lua_pop(L, 1);
    }
    Json out;
    if ((count > 0 && all_index_keys && static_cast<lua_Integer>(count) == n) ||
        (count == 0 && has_array_mark(L, idx))) {
      out = Json::array();
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, i);
        out.push_back(value(-1, path + "[" + std::to_string(i) + "]"));
        lua_pop(L, 1);
      }
    } else {
      out = Json::object();
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        std::string key;
        if (lua_type(L, -2) == LUA_TSTRING) {
          key = lua_tostring(L, -2);
        } else if (lua_isinteger(L, -2)) {
          key = std::to_string(lua_tointeger(L, -2));
        } else {
          lua_pop(L, 2);
          throw Error(path + ": a key of type " + luaL_typename(L, -2) +
                      " cannot be written as JSON");
        }
        out[key] = value(-1, path + "." + key);
        lua_pop(L, 1);
      }
    }
    open.pop_back();
    return out;
  }
};

}  // namespace

Json to_json(lua_State* L, int idx, const char* where) {
  Encoder enc{L, {}};
  return enc.value(idx, where);
}

void push_json(lua_State* L, const Json& v) {
  luaL_checkstack(L, 4, "JSON nesting too deep");
  switch (v.type()) {
    case Json::value_t::null: push_json_null(L); break;
    case Json::value_t::boolean: lua_pushboolean(L, v.get<bool>()); break;
    case Json::value_t::number_integer: lua_pushinteger(L, v.get<int64_t>()); break;
    case Json::value_t::number_unsigned: {
      uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) lua_pushinteger(L, static_cast<lua_Integer>(u));
      else lua_pushnumber(L, static_cast<double>(u));
      break;
    }
    case Json::value_t::number_float: lua_pushnumber(L, v.get<double>()); break;
    case Json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case Json::value_t::array: {
      lua_createtable(L, static_cast<int>(v.size()), 0);
      lua_Integer i = 1;
      for (const auto& item : v) {
        push_json(L, item);
        lua_rawseti(L, -2, i++);
      }
      mark_array(L, -1);
      break;
    }
    case Json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(v.size()));
      for (const auto& [key, item] : v.items()) {
        push_json(L, item);
        lua_setfield(L, -2, key.c_str());
      }
      break;
    }
    default: lua_pushnil(L); break;
  }
}

}  // namespace host
