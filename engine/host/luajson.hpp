// Lua values <-> JSON. Tables with keys 1..n become arrays, other tables objects; an empty
// table is an object unless it carries the array mark (json.array{}); json.null stands
// for null both ways. Decoded arrays carry the mark, so they encode back as arrays.
#pragma once

#include <nlohmann/json.hpp>
#include <lua.hpp>

namespace host {

using Json = nlohmann::json;

// Throws host::Error naming the offending path (e.g. "config.lr") for values JSON
// cannot hold: functions, userdata, cycles, NaN keys.
Json to_json(lua_State* L, int idx, const char* where);
void push_json(lua_State* L, const Json& value);

// The sentinel for null and the metatable marking arrays; created on first use.
void push_json_null(lua_State* L);
bool is_json_null(lua_State* L, int idx);
void mark_array(lua_State* L, int idx);

}  // namespace host
