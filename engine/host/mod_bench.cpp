// engine.bench: kernel evaluation (engine/bench) for scripts.
//
//   local r = bench.evaluate(src, {opt = "O3", problem = {M = 512, N = 512, K = 512}})
//   if r.status == "ok" then print(r.gflops, r.median) end
//   local rs = bench.evaluate_batch({src1, src2}, {threads = 2})
//   local blas = bench.reference{problem = {M = 512, N = 512, K = 512}}  -- fastest threads
//   print(bench.machine().peak_formula)
//   bench.symbol_allowed("expf")    -- true: what a kernel may call outside itself
//   bench.allowed_symbols().text    -- "libm, malloc/calloc/..., the OpenMP runtime (...)"
//   bench.allowed_symbols().yardstick_libraries  -- {name, links, prefixes, fortran}: never callable
//
// Options (all optional; unknown keys are errors): opt "O0".."O3" or "Os", march (a CPU name,
// "-m..." flags, or "native"/nil for the host), backend ("gcc", "gccjit" when built),
// threads (0/nil: all cores), warmup (1), runs (3), max_runs (10) and cov_target (0.05:
// more timed calls, up to max_runs, while their CoV is above it), timeout (8 s, warm-up
// and timed calls together), compile_timeout (60 s), memory_mb (4096, address space the kernel may
// add), problem {kind = "matmul", M, N, K (256), seed (none: a key drawn from the operating system for every set of inputs; a number fixes the inputs, for debugging), c_init = "zero" | "nan"},
// verify "fp64" (every element of every call within the double-precision error bound) |
// "paper" (105 points of every call, relative error 1e-6), share (true: kernels of a batch
// whose compiled code is identical run once, the others get that record with their own
// compile report and same_code_as, the 0-based index of the kernel that ran), pool
// (compiled kernels waiting for their turns at most, 32), hold (true: the compiles under way
// are held stopped while a full pool runs; false: the pool waits for them), split_checks (true:
// a call's inputs loaded and outputs checked on the calls' threads; false: on one thread). Every call
// gets inputs of its own; warmup + max(runs, max_runs) <= 64.
//
// Result: the evaluation process's record as it is (one shape from the kernel's child to
// the script), every field of it declared once, with its meaning, in
// wire/result_record.hpp: bench.result_fields() lists them ({name, kind, kept, meaning}),
// bench.check_record(record) says whether a record (a judge's in Lua too) keeps to them.
// bench.reference takes the same options (warmup 5, runs 20 unless given; threads
// 0/nil: the fastest count) and adds thread_trials {threads, min, median, cov}.
//
// CUDA (engine/cuda, on the GPU node): bench.cuda*, in mod_bench_cuda.cpp.
//
// bench.impossible_rate(gflops, gbps, {gflops =, gbps =, gflops_name =, gbps_name =}) is
// the verdict's peak rule for judges written in Lua: why the figures cannot be a
// measurement, or nil.
//
// This is engine.bench_core; scripts see engine.bench (stdlib/engine/bench.lua), the same
// functions with a task of the suite (stdlib/tasks/*.lua, docs/tasks.md) resolved in Lua:
//   bench.evaluate(src, {task = "axpy", size = "test"})   -- size: a name or {n = ...}
// reaches these as problem = {task =, size =, seed =, spec = the spec for that size}, and
// bench.task_inputs{task =, size =, seed =, call =} draws one call's inputs as an evaluation
// would. A task without its spec is refused here: nothing in C++ calls back into Lua.

#include <cmath>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "bench/peak.hpp"
#include "task/rate_bound.hpp"
#include "task/task.hpp"
#include "parallel/bench_workers/cluster.hpp"
#include "host/bind.hpp"
#include "host/luajson.hpp"
#include "host/mod_bench_cuda.hpp"

namespace host {

template <>
const char* Class<cluster::Submission>::name = "engine.bench.Batch";

// A task of the suite reaches C++ resolved (engine.bench, in Lua, adds its spec for the
// size): a problem that names a task without one did not come through it.
static void require_spec(const nlohmann::json& problem, const char* where) {
  if (problem.is_object() && problem.contains("task") && !problem.contains("spec"))
    throw Error(std::string(where) + ": problem.task has no resolved spec (call engine.bench, which "
                "resolves a task of the suite, not engine.bench_core)");
}

// Reads a call's options; bench::check_options checks them, once per call: at once where
// nothing is evaluated now (checked_now), else by the evaluation the call makes
// (checked_by_the_call), which builds the task anyway.
static bench::EvalOptions read_options(lua_State* L, int idx, const char* where,
                                       bench::EvalOptions o = {}) {
  Options t(L, idx, where);
  t.get("opt", o.opt);  // checked with the rest, by bench::check_options
  t.get("march", o.march);
  t.get("backend", o.backend);
  int64_t threads = 0, warmup = o.warmup, runs = o.runs, max_runs = o.max_runs, memory_mb = o.memory_mb,
          pool = o.pool;
  t.get("threads", threads);
  t.get("warmup", warmup);
  t.get("runs", runs);
  t.get("max_runs", max_runs);
  t.get("cov_target", o.cov_target);
  t.get("timeout", o.timeout);
  t.get("compile_timeout", o.compile_timeout);
  t.get("memory_mb", memory_mb);
  t.get("verify", o.verify, {"fp64", "paper"});
  t.get("yardstick", o.yardstick);
  t.get("share", o.share);
  t.get("hold", o.hold);
  t.get("split_checks", o.split_checks);
  t.get("pool", pool);
  t.push("problem");
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1)) throw Error(std::string(where) + ": option 'problem' must be a table");
    o.problem = to_json(L, -1, "problem");
    if (o.problem.is_array() && o.problem.empty()) o.problem = nlohmann::json::object();
  }
  lua_pop(L, 1);
  for (const char* key : {"task", "size"}) {  // {task = NAME, size = ...}: problem's fields
    t.push(key);
    if (!lua_isnil(L, -1)) o.problem[key] = to_json(L, -1, key);
    lua_pop(L, 1);
  }
  t.done();
  require_spec(o.problem, where);
  auto in_int = [&](int64_t v, const char* name) {
    if (v < 0 || v > (int64_t(1) << 30)) throw Error(std::string(where) + ": option '" + name + "' is out of range");
    return static_cast<int>(v);
  };
  o.threads = in_int(threads, "threads");
  o.warmup = in_int(warmup, "warmup");
  o.runs = in_int(runs, "runs");
  o.max_runs = in_int(max_runs, "max_runs");
  o.pool = in_int(pool, "pool");
  o.memory_mb = memory_mb;
  return o;
}

// f(), a bad option named with the call that gave it (bench's checks throw
// std::invalid_argument).
template <class F>
static auto checked_by_the_call(const char* where, F f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw Error(std::string(where) + ": " + e.what());
  }
}

static bench::EvalOptions checked_now(bench::EvalOptions o, const char* where) {
  checked_by_the_call(where, [&] { bench::check_options(o); });
  return o;
}

// Fields of the table on top of the stack.
static void set_strings(lua_State* L, const char* key, const std::vector<std::string>& v) {
  push_strings(L, v);
  lua_setfield(L, -2, key);
}

static void set_boolean(lua_State* L, const char* key, bool v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, key);
}

// Records reach the scripts only as wire/result_record.hpp declares them.
static void push_records(lua_State* L, const char* where, const nlohmann::json& records) {
  for (const auto& r : records.is_array() ? records : nlohmann::json::array({records})) {
    const std::string problem = bench::check_result_record(r);
    if (!problem.empty()) throw Error(std::string(where) + ": the evaluation's record: " + problem);
  }
  push_json(L, records);
}

static int bench_evaluate(lua_State* L) {
  std::string src = check_string(L, 1, "bench.evaluate", "source");
  auto opts = read_options(L, 2, "bench.evaluate");
  push_records(L, "bench.evaluate",
               checked_by_the_call("bench.evaluate", [&] { return cluster::evaluate_records({src}, opts); }).at(0));
  return 1;
}

static int bench_evaluate_batch(lua_State* L) {
  auto sources = check_string_list(L, 1, "bench.evaluate_batch", "sources");
  auto opts = read_options(L, 2, "bench.evaluate_batch");
  push_records(L, "bench.evaluate_batch",
               checked_by_the_call("bench.evaluate_batch", [&] { return cluster::evaluate_records(sources, opts); }));
  return 1;
}

// bench.submit_batch(sources, opts): the batch goes to the background and a handle comes
// back at once; batches are evaluated one after another in submission order.
//   local b = bench.submit_batch(sources, opts)  -- ... sample the next kernels ...
//   local rs = b:wait()                          -- as bench.evaluate_batch returns them
// b:ready() says whether wait() would return at once. A handle dropped before its batch
// started skips it; dropping one under way waits for it.
static int bench_submit_batch(lua_State* L) {
  auto sources = check_string_list(L, 1, "bench.submit_batch", "sources");
  auto opts = checked_now(read_options(L, 2, "bench.submit_batch"), "bench.submit_batch");
  push_object(L, std::make_shared<cluster::Submission>(cluster::submit_batch(sources, opts)));
  return 1;
}

static int batch_ready(lua_State* L) {
  lua_pushboolean(L, check_object<cluster::Submission>(L, 1, "batch:ready").ready());
  return 1;
}

static int batch_wait(lua_State* L) {
  push_records(L, "batch:wait", check_object<cluster::Submission>(L, 1, "batch:wait").wait());
  return 1;
}

static int batch_release(lua_State* L) {
  if (auto* box = object_box<cluster::Submission>(L, 1); box && *box) {
    (*box)->abandon();
    box->reset();
  }
  return 0;
}

// The library measured as a user would: its pool warm, many calls, the fastest thread
// count unless one is given.
static int bench_reference(lua_State* L) {
  bench::EvalOptions defaults;
  defaults.warmup = 5;
  defaults.runs = defaults.max_runs = 20;
  auto opts = read_options(L, 1, "bench.reference", defaults);
  push_records(L, "bench.reference",
               checked_by_the_call("bench.reference", [&] { return cluster::reference_record(opts); }));
  return 1;
}

// bench.check_options(opts): true, or an error naming the bad option (the checks of
// bench.evaluate, for scripts that must refuse options before they make anything).
static int bench_check_options(lua_State* L) {
  checked_now(read_options(L, 1, "bench.check_options"), "bench.check_options");
  lua_pushboolean(L, 1);
  return 1;
}

// What a measured peak and a measured bandwidth both say of the measurement: when, how,
// and where it is cached.
template <class Measured>
static void set_measured(lua_State* L, const Measured& m) {
  set_string(L, "date", m.date);
  set_string(L, "method", m.method);
  set_string(L, "cache_file", m.cache_file);
  set_boolean(L, "from_cache", m.from_cache);
}

static void set_peak(lua_State* L, const bench::MeasuredPeak& p) {
  set_number(L, "gflops", p.gflops);
  set_number(L, "per_cpu_gflops", p.per_cpu_gflops);
  lua_pushinteger(L, p.cpus);
  lua_setfield(L, -2, "cpus");
  set_string(L, "isa", p.isa);
  set_boolean(L, "fma", p.fma);
  set_measured(L, p);
}

// bench.machine(): the machine record, with the nominal peak (peak_gflops, peak_formula)
// and the measured one (measured_peak_gflops, _date, _method), measured on first use and
// cached per machine.
static int bench_machine(lua_State* L) {
  push_json(L, bench::machine_record());
  return 1;
}

// bench.measure_peak([dir]): the FP64 peak measured now ({gflops =, per_cpu_gflops =,
// cpus =, isa =, fma =, date =, method =}); with `dir`, the one cached there for this
// machine (measured and written first when missing).
static int bench_measure_peak(lua_State* L) {
  bench::MeasuredPeak p = lua_isnoneornil(L, 1)
                              ? bench::measure_peak()
                              : bench::cached_peak(check_string(L, 1, "bench.measure_peak", "dir"));
  lua_createtable(L, 0, 10);
  set_peak(L, p);
  return 1;
}

// bench.measure_bandwidth([dir]): the memory bandwidth measured now ({gbps =, cpus =,
// date =, method =}); with `dir`, the one cached there for this machine.
static int bench_measure_bandwidth(lua_State* L) {
  bench::MeasuredBandwidth b = lua_isnoneornil(L, 1)
                                   ? bench::measure_bandwidth()
                                   : bench::cached_bandwidth(check_string(L, 1, "bench.measure_bandwidth", "dir"));
  lua_createtable(L, 0, 6);
  set_number(L, "gbps", b.gbps);
  lua_pushinteger(L, b.cpus);
  lua_setfield(L, -2, "cpus");
  set_measured(L, b);
  return 1;
}

// bench.symbol_allowed(name): whether a kernel may reference `name` outside itself (the
// allowed libraries every back end checks against).
static int bench_symbol_allowed(lua_State* L) {
  lua_pushboolean(L, bench::symbol_allowed(check_string(L, 1, "bench.symbol_allowed", "name")));
  return 1;
}

// bench.allowed_symbols(): the allowed libraries as data, {libraries = {{name =,
// symbols = {...}, prefixes = {...}, shown =}, ...}, text = "libm, malloc/..., ..."}.
static int bench_allowed_symbols(lua_State* L) {
  const auto& libs = bench::allowed_libraries();
  lua_createtable(L, 0, 2);
  push_array(L, libs, [L](const auto& lib) {
    lua_createtable(L, 0, 4);
    set_string(L, "name", lib.name);
    set_strings(L, "symbols", lib.symbols);
    set_strings(L, "prefixes", lib.prefixes);
    set_boolean(L, "shown", lib.shown);
  });
  lua_setfield(L, -2, "libraries");
  // What a kernel may not call by name: the yardstick libraries (a library violation).
  push_array(L, bench::yardstick_libraries(), [L](const auto& lib) {
    lua_createtable(L, 0, 4);
    set_string(L, "name", lib.name);
    set_strings(L, "links", lib.links);
    set_strings(L, "prefixes", lib.prefixes);
    set_boolean(L, "fortran", lib.fortran);
  });
  lua_setfield(L, -2, "yardstick_libraries");
  set_string(L, "text", bench::allowed_libraries_text());
  return 1;
}

// bench.task_inputs{task = NAME, size = NAME or {...}, seed = n (none: a fresh key), call = 0}:
// the inputs one call of an evaluation would draw, {name = {values}} per drawn buffer and
// scalar (NaN as 0/0), drawn here as the evaluation's helper draws them. For tests of what
// the draws cover; an evaluation never sees these (its key is its own).
static int bench_task_inputs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  nlohmann::json problem = to_json(L, 1, "bench.task_inputs");
  int call = 0;
  if (problem.contains("call")) {
    if (!problem["call"].is_number_integer()) throw Error("bench.task_inputs: call must be an integer");
    call = problem["call"].get<int>();
    problem.erase("call");
  }
  require_spec(problem, "bench.task_inputs");
  nlohmann::json values;
  try {
    values = bench::draw_task_inputs(problem, call);
  } catch (const std::exception& e) {
    throw Error(std::string("bench.task_inputs: ") + e.what());
  }
  lua_newtable(L);
  for (auto it = values.begin(); it != values.end(); ++it) {
    const auto& a = it.value();
    lua_createtable(L, static_cast<int>(a.size()), 0);
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_number_integer()) lua_pushinteger(L, a[i].get<lua_Integer>());
      else lua_pushnumber(L, a[i].is_null() ? std::nan("") : a[i].get<double>());
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_setfield(L, -2, it.key().c_str());
  }
  return 1;
}

// bench.result_fields(): the evaluation record's fields as wire/result_record.hpp declares
// them, in its order: {{name =, kind =, kept =, meaning =}, ...}.
static int bench_result_fields(lua_State* L) {
  const auto& fields = bench::result_fields();
  push_array(L, fields, [L](const auto& field) {
    lua_createtable(L, 0, 4);
    lua_pushstring(L, field.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, bench::kind_name(field.kind));
    lua_setfield(L, -2, "kind");
    set_boolean(L, "kept", field.kept);
    lua_pushstring(L, field.meaning);
    lua_setfield(L, -2, "meaning");
  });
  return 1;
}

// bench.check_record(record): nil when the record keeps to the declaration, else its first
// problem naming the field (an undeclared field, a field of another kind).
static int bench_check_record(lua_State* L) {
  const std::string problem = bench::check_result_record(to_json(L, 1, "bench.check_record"));
  if (problem.empty()) lua_pushnil(L);
  else lua_pushstring(L, problem.c_str());
  return 1;
}

// bench.impossible_rate(gflops, gbps, {gflops =, gbps =, gflops_name =, gbps_name =}):
// why those figures cannot be a measurement against those peaks (a peak of 0 or none
// bounds nothing), or nil: the rule the CPU harness's verdict applies, for judges in Lua.
static int bench_impossible_rate(lua_State* L) {
  const double gflops = check_number(L, 1, "bench.impossible_rate", "gflops");
  const double gbps = check_number(L, 2, "bench.impossible_rate", "gbps");
  bench::PeakRates peak;
  host::Options o(L, 3, "bench.impossible_rate");
  o.get("gflops", peak.gflops);
  o.get("gbps", peak.gbps);
  o.get("gflops_name", peak.gflops_name);
  o.get("gbps_name", peak.gbps_name);
  o.done();
  const std::string why = bench::impossible_rate(gflops, gbps, peak);
  if (why.empty()) lua_pushnil(L);
  else lua_pushstring(L, why.c_str());
  return 1;
}

static int bench_backends(lua_State* L) {
  push_strings(L, bench::backend_names());
  return 1;
}

int open_bench(lua_State* L) {
  define_class<cluster::Submission>(L, {HOST_FN("ready", batch_ready), HOST_FN("wait", batch_wait)},
                                    {HOST_FN("__gc", batch_release), HOST_FN("__close", batch_release)});
  lua_newtable(L);
  set_functions(L, {HOST_FN("evaluate", bench_evaluate), HOST_FN("evaluate_batch", bench_evaluate_batch),
                    HOST_FN("submit_batch", bench_submit_batch),
                    HOST_FN("reference", bench_reference), HOST_FN("machine", bench_machine),
                    HOST_FN("measure_peak", bench_measure_peak), HOST_FN("measure_bandwidth", bench_measure_bandwidth),
                    HOST_FN("backends", bench_backends), HOST_FN("check_options", bench_check_options),
                    HOST_FN("symbol_allowed", bench_symbol_allowed),
                    HOST_FN("allowed_symbols", bench_allowed_symbols), HOST_FN("task_inputs", bench_task_inputs),
                    HOST_FN("impossible_rate", bench_impossible_rate), HOST_FN("result_fields", bench_result_fields),
                    HOST_FN("check_record", bench_check_record)});
  set_bench_cuda(L);
  return 1;
}

}  // namespace host
