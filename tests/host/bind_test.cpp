// The binding layer: C++ errors become Lua errors with clear messages, options tables
// are checked, JSON converts both ways.
#include <catch2/catch.hpp>

#include "host/bind.hpp"
#include "host/luajson.hpp"
#include "host/runtime.hpp"

namespace {

int read_options(lua_State* L) {
  std::string opt = "O3";
  int64_t runs = 3;
  bool full = false;
  std::optional<double> timeout;
  host::Options o(L, 1, "bench.evaluate");
  o.get("opt", opt, {"O0", "O1", "O2", "O3"});
  o.get("runs", runs);
  o.get("full", full);
  o.get("timeout", timeout);
  o.done();
  lua_pushfstring(L, "%s %d %d %f", opt.c_str(), static_cast<int>(runs), full,
                  timeout.value_or(-1));
  return 1;
}

int throws_runtime_error(lua_State*) { throw std::runtime_error("the kernel exploded"); }

// Runs code that must fail; returns the error message.
std::string error_of(host::Runtime& rt, const std::string& code) {
  lua_State* L = rt.L();
  REQUIRE(luaL_loadstring(L, code.c_str()) == LUA_OK);
  int status = lua_pcall(L, 0, 0, 0);
  REQUIRE(status != LUA_OK);
  std::string msg = lua_tostring(L, -1);
  lua_pop(L, 1);
  return msg;
}

// Runs code that must succeed; returns the value it returns, as a string.
std::string value_of(host::Runtime& rt, const std::string& code) {
  lua_State* L = rt.L();
  REQUIRE(luaL_dostring(L, code.c_str()) == LUA_OK);
  std::string value = lua_tostring(L, -1);
  lua_pop(L, 1);
  return value;
}

}  // namespace

TEST_CASE("options tables are read and checked", "[bind]") {
  host::Runtime rt(host::find_paths());
  lua_State* L = rt.L();
  lua_pushcfunction(L, host::guarded<read_options>);
  lua_setglobal(L, "f");
  CHECK(value_of(rt, "return f{opt = 'O1', runs = 5, timeout = 2.5}") == "O1 5 0 2.5");
  CHECK(value_of(rt, "return f()") == "O3 3 0 -1.0");

  CHECK_THAT(error_of(rt, "f{opt = 'O4'}"),
             Catch::Contains("option 'opt' is \"O4\"; expected one of \"O0\", \"O1\""));
  CHECK_THAT(error_of(rt, "f{rnus = 5}"), Catch::Contains("unknown option 'rnus'"));
  CHECK_THAT(error_of(rt, "f{runs = 2.5}"), Catch::Contains("option 'runs' must be an integer"));
  CHECK_THAT(error_of(rt, "f{full = 'yes'}"),
             Catch::Contains("option 'full' must be a boolean, got string"));
  CHECK_THAT(error_of(rt, "f(3)"), Catch::Contains("options must be a table"));
}

TEST_CASE("a C++ exception surfaces as a Lua error", "[bind]") {
  host::Runtime rt(host::find_paths());
  lua_pushcfunction(rt.L(), host::guarded<throws_runtime_error>);
  lua_setglobal(rt.L(), "boom");
  CHECK(error_of(rt, "boom()") == "the kernel exploded");
  // The state is still usable afterwards.
  CHECK(luaL_dostring(rt.L(), "return 1") == LUA_OK);
}

TEST_CASE("JSON conversion keeps arrays, objects and null apart", "[bind]") {
  host::Runtime rt(host::find_paths());
  lua_State* L = rt.L();
  REQUIRE(luaL_dostring(L, "return {1, 2, {a = json.null, b = json.array()}, {}}") == LUA_OK);
  host::Json j = host::to_json(L, -1, "value");
  CHECK(j.dump() == R"([1,2,{"a":null,"b":[]},{}])");
  lua_pop(L, 1);
  host::push_json(L, host::Json::parse(R"({"xs": [], "n": 3, "f": 0.5})"));
  lua_setglobal(L, "v");
  CHECK(value_of(rt, "return json.encode(v.xs) .. json.encode(v.n) .. v.f") == "[]30.5");
  CHECK_THAT(error_of(rt, "local t = {} t.self = t json.encode(t)"),
             Catch::Contains("contains itself"));
  CHECK_THAT(error_of(rt, "json.encode({f = print})"), Catch::Contains("value.f: cannot be"));
  CHECK_THAT(error_of(rt, "json.decode('{\"a\": ')"), Catch::Contains("cannot parse"));
}
