// engine.json: JSON read and write for scripts.
#include <fstream>
#include <sstream>

#include "host/bind.hpp"
#include "host/luajson.hpp"

namespace host {

static std::string dump(const Json& j, bool pretty) {
  return pretty ? j.dump(2, ' ', false, Json::error_handler_t::replace)
                : j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

static bool pretty_option(lua_State* L, int idx, const char* where) {
  bool pretty = false;
  Options o(L, idx, where);
  o.get("pretty", pretty);
  o.done();
  return pretty;
}

static int json_encode(lua_State* L) {
  bool pretty = pretty_option(L, 2, "json.encode");
  std::string s = dump(to_json(L, 1, "value"), pretty);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

static Json parse(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw Error("json: cannot parse " + source + ": " + e.what());
  }
}

static int json_decode(lua_State* L) {
  push_json(L, parse(check_string(L, 1, "json.decode", "text"), "text"));
  return 1;
}

static int json_read(lua_State* L) {
  std::string path = check_string(L, 1, "json.read", "path");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("json.read: cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  push_json(L, parse(ss.str(), path));
  return 1;
}

static int json_write(lua_State* L) {
  std::string path = check_string(L, 1, "json.write", "path");
  bool pretty = !lua_isnoneornil(L, 3) ? pretty_option(L, 3, "json.write") : true;
  std::string text = dump(to_json(L, 2, "value"), pretty) + "\n";
  // Write aside and rename so a crash never leaves a half-written file.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("json.write: cannot write " + tmp);
    out << text;
    if (!out.flush()) throw Error("json.write: cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error("json.write: cannot rename " + tmp + " to " + path);
  return 0;
}

static int json_array(lua_State* L) {
  if (lua_isnoneornil(L, 1)) lua_newtable(L);
  else check_table(L, 1, "json.array", "table");
  lua_settop(L, 1);
  if (lua_isnil(L, 1)) lua_newtable(L);
  mark_array(L, -1);
  return 1;
}

int open_json(lua_State* L) {
  lua_newtable(L);
  set_functions(L, {HOST_FN("encode", json_encode), HOST_FN("decode", json_decode),
                    HOST_FN("read", json_read), HOST_FN("write", json_write),
                    HOST_FN("array", json_array)});
  push_json_null(L);
  lua_setfield(L, -2, "null");
  return 1;
}

}  // namespace host
