// engine.store: the run store (engine/store) for scripts.
//
//   local run = store.open("runs/exp1", {config = {...}})
//   run:atomic(function() run:add_sample{...}; run:log{step = 3}; run:set("step", 3) end)
//   local reader = store.open("runs/exp1", {read_only = true})   -- no lock: a live run too
//
// One engine at a time may open a run for writing (store.hpp): a second store.open of
// the same directory fails with a message naming the pid that holds it.
#include "host/bind.hpp"
#include "host/log.hpp"
#include "host/luajson.hpp"
#include "store/store.hpp"

namespace host {

template <>
const char* Class<store::Run>::name = "engine.store.Run";

static store::Run& self(lua_State* L, const char* where) {
  return check_object<store::Run>(L, 1, where);
}

static int store_open(lua_State* L) {
  std::string dir = check_string(L, 1, "store.open", "directory");
  store::OpenOptions oo;
  bool log_file = true;
  Options o(L, 2, "store.open");
  o.push("config");
  if (!lua_isnil(L, -1)) oo.config = to_json(L, -1, "config");
  lua_pop(L, 1);
  o.get("replace_config", oo.replace_config);
  o.get("read_only", oo.read_only);
  if (oo.read_only) log_file = false;  // a reader writes nothing into the run
  o.get("log_file", log_file);
  o.done();
  if (oo.read_only && log_file) throw Error("store.open: a read_only run takes no log_file");
  auto run = store::Run::open(dir, oo);
  if (log_file) log_to_file((run->dir() / "run.log").string());
  push_object(L, run.release());
  return 1;
}

// store.holder(dir): the pid of the engine that has the run open, or nil.
static int store_holder(lua_State* L) {
  auto pid = store::lock_holder(check_string(L, 1, "store.holder", "directory"));
  if (pid) lua_pushinteger(L, *pid);
  else lua_pushnil(L);
  return 1;
}

// ---- samples --------------------------------------------------------------

static void push_sample(lua_State* L, const store::Sample& s) {
  lua_createtable(L, 0, 14);
  auto set_int = [&](const char* k, std::optional<int64_t> v) {
    if (!v) return;
    lua_pushinteger(L, *v);
    lua_setfield(L, -2, k);
  };
  auto set_num = [&](const char* k, std::optional<double> v) {
    if (!v) return;
    lua_pushnumber(L, *v);
    lua_setfield(L, -2, k);
  };
  auto set_str = [&](const char* k, const std::string& v) {
    lua_pushlstring(L, v.data(), v.size());
    lua_setfield(L, -2, k);
  };
  set_int("id", s.id);
  set_int("parent_id", s.parent_id);
  set_int("iteration", s.iteration);
  set_int("stage", s.stage);
  set_str("prompt", s.prompt);
  set_str("completion", s.completion);
  set_str("code", s.code);
  set_str("status", s.status);
  set_num("reward", s.reward);
  set_num("gflops", s.gflops);
  push_json(L, s.timings);
  lua_setfield(L, -2, "timings");
  set_str("config_id", s.config_id);
  push_json(L, s.extra);
  lua_setfield(L, -2, "extra");
}

static void push_samples(lua_State* L, const std::vector<store::Sample>& list) {
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    push_sample(L, list[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

static int run_add_sample(lua_State* L) {
  auto& run = self(L, "run:add_sample");
  check_table(L, 2, "run:add_sample", "sample");
  store::Sample s;
  Options o(L, 2, "run:add_sample");
  o.get("parent_id", s.parent_id);
  o.get("iteration", s.iteration);
  o.get("stage", s.stage);
  o.get("prompt", s.prompt);
  o.get("completion", s.completion);
  o.get("code", s.code);
  o.get("status", s.status);
  o.get("reward", s.reward);
  o.get("gflops", s.gflops);
  o.get("config_id", s.config_id);
  o.push("timings");
  if (!lua_isnil(L, -1)) s.timings = to_json(L, -1, "timings");
  lua_pop(L, 1);
  o.push("extra");
  if (!lua_isnil(L, -1)) s.extra = to_json(L, -1, "extra");
  lua_pop(L, 1);
  o.done();
  if (s.status.empty()) throw Error("run:add_sample: the sample needs a status");
  lua_pushinteger(L, run.add_sample(s));
  return 1;
}

static store::SampleQuery read_query(lua_State* L, int idx, const char* where) {
  store::SampleQuery q;
  Options o(L, idx, where);
  o.get("iteration", q.iteration);
  o.get("stage", q.stage);
  o.get("parent_id", q.parent_id);
  o.get("after_id", q.after_id);
  o.get("status", q.status);
  o.get("config_id", q.config_id);
  o.get("order_by", q.order_by, {"id", "gflops", "reward", "iteration"});
  o.get("descending", q.descending);
  o.get("limit", q.limit);
  o.done();
  return q;
}

static int run_samples(lua_State* L) {
  auto& run = self(L, "run:samples");
  push_samples(L, run.samples(read_query(L, 2, "run:samples")));
  return 1;
}

static int run_count(lua_State* L) {
  auto& run = self(L, "run:count");
  lua_pushinteger(L, run.count(read_query(L, 2, "run:count")));
  return 1;
}

static int run_sample(lua_State* L) {
  auto& run = self(L, "run:sample");
  auto s = run.sample(check_integer(L, 2, "run:sample", "id"));
  if (s) push_sample(L, *s);
  else lua_pushnil(L);
  return 1;
}

static int run_lineage(lua_State* L) {
  auto& run = self(L, "run:lineage");
  push_samples(L, run.lineage(check_integer(L, 2, "run:lineage", "id")));
  return 1;
}

// ---- metrics, state, transactions -----------------------------------------

static int run_log(lua_State* L) {
  auto& run = self(L, "run:log");
  check_table(L, 2, "run:log", "record");
  run.log(to_json(L, 2, "record"));
  return 0;
}

static int run_metrics(lua_State* L) {
  auto& run = self(L, "run:metrics");
  auto list = run.metrics();
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    push_json(L, list[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

static int run_get(lua_State* L) {
  auto& run = self(L, "run:get");
  auto v = run.get(check_string(L, 2, "run:get", "key"));
  if (v && !v->is_null()) push_json(L, *v);
  else if (!lua_isnoneornil(L, 3)) lua_pushvalue(L, 3);  // the caller's default
  else lua_pushnil(L);
  return 1;
}

static int run_set(lua_State* L) {
  auto& run = self(L, "run:set");
  std::string key = check_string(L, 2, "run:set", "key");
  if (lua_isnoneornil(L, 3)) run.erase(key);
  else run.set(key, to_json(L, 3, key.c_str()));
  return 0;
}

static int run_state(lua_State* L) {
  push_json(L, self(L, "run:state").state());
  return 1;
}

static int run_begin(lua_State* L) {
  self(L, "run:begin").begin();
  return 0;
}

static int run_commit(lua_State* L) {
  self(L, "run:commit").commit();
  return 0;
}

static int run_rollback(lua_State* L) {
  self(L, "run:rollback").rollback();
  return 0;
}

static int run_in_transaction(lua_State* L) {
  lua_pushboolean(L, self(L, "run:in_transaction").in_transaction());
  return 1;
}

// run:atomic(fn, ...) is Lua: fn may raise Lua errors, which must not cross C++ frames.
static const char* kAtomic = R"(
local methods = ...
function methods.atomic(run, fn, ...)
  run:begin()
  local result = table.pack(pcall(fn, ...))
  if not result[1] then
    if run:in_transaction() then run:rollback() end
    error(result[2], 0)
  end
  run:commit()
  return table.unpack(result, 2, result.n)
end
)";

// ---- checkpoints and attributes -------------------------------------------

static int run_begin_checkpoint(lua_State* L) {
  auto& run = self(L, "run:begin_checkpoint");
  lua_pushstring(L, run.begin_checkpoint(check_string(L, 2, "run:begin_checkpoint", "name")).c_str());
  return 1;
}

static int run_commit_checkpoint(lua_State* L) {
  auto& run = self(L, "run:commit_checkpoint");
  lua_pushstring(L,
                 run.commit_checkpoint(check_string(L, 2, "run:commit_checkpoint", "name")).c_str());
  return 1;
}

static int run_checkpoints(lua_State* L) {
  auto list = self(L, "run:checkpoints").checkpoints();
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    lua_pushstring(L, list[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

static int run_checkpoint_path(lua_State* L) {
  auto& run = self(L, "run:checkpoint_path");
  lua_pushstring(L, run.checkpoint_path(check_string(L, 2, "run:checkpoint_path", "name")).c_str());
  return 1;
}

static int run_dir(lua_State* L) {
  lua_pushstring(L, self(L, "run:dir").dir().c_str());
  return 1;
}

static int run_resumed(lua_State* L) {
  lua_pushboolean(L, self(L, "run:resumed").resumed());
  return 1;
}

static int run_read_only(lua_State* L) {
  lua_pushboolean(L, self(L, "run:read_only").read_only());
  return 1;
}

static int run_config(lua_State* L) {
  push_json(L, self(L, "run:config").config());
  return 1;
}

static int run_close(lua_State* L) {
  auto* box = object_box<store::Run>(L, 1);
  if (!box) throw Error("run:close: argument 1 must be a run");
  bool had_log = *box && !(*box)->read_only();  // a reader never took the log file
  release_object<store::Run>(L);
  if (had_log) log_close_file();
  return 0;
}

static int run_tostring(lua_State* L) {
  if (auto* run = test_object<store::Run>(L, 1)) lua_pushfstring(L, "run(%s)", run->dir().c_str());
  else lua_pushliteral(L, "run(closed)");
  return 1;
}

int open_store(lua_State* L) {
  define_class<store::Run>(
      L,
      {HOST_FN("add_sample", run_add_sample), HOST_FN("samples", run_samples),
       HOST_FN("count", run_count), HOST_FN("sample", run_sample),
       HOST_FN("lineage", run_lineage), HOST_FN("log", run_log),
       HOST_FN("metrics", run_metrics), HOST_FN("get", run_get), HOST_FN("set", run_set),
       HOST_FN("state", run_state), HOST_FN("begin", run_begin), HOST_FN("commit", run_commit),
       HOST_FN("rollback", run_rollback), HOST_FN("in_transaction", run_in_transaction),
       HOST_FN("begin_checkpoint", run_begin_checkpoint),
       HOST_FN("commit_checkpoint", run_commit_checkpoint),
       HOST_FN("checkpoints", run_checkpoints), HOST_FN("checkpoint_path", run_checkpoint_path),
       HOST_FN("dir", run_dir), HOST_FN("resumed", run_resumed), HOST_FN("config", run_config),
       HOST_FN("read_only", run_read_only),
       HOST_FN("close", run_close)},
      {HOST_FN("__tostring", run_tostring)});
  luaL_getmetatable(L, Class<store::Run>::name);
  lua_getfield(L, -1, "__index");
  if (luaL_loadstring(L, kAtomic) != LUA_OK) return lua_error(L);
  lua_insert(L, -2);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  lua_newtable(L);
  set_functions(L, {HOST_FN("open", store_open), HOST_FN("holder", store_holder)});
  return 1;
}

}  // namespace host
