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
// CUDA (engine/cuda, on the GPU node): bench.cuda() says whether GPU 0, its driver and
// NVRTC are there, and bench.cuda_compile(src, {entries = {...}}) compiles CUDA C++ in
// memory for it; bench.cuda_run runs a kernel, bench.cuda_judge runs and checks it against
// libtorch's reference (bench.cuda_reference, the rule bench.cuda_check), and
// bench.cuda_yardstick times libtorch's own op the same way (below).
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
#include "cuda/calls.hpp"
#include "cuda/cuda.hpp"
#include "cudaref/check.hpp"
#include "cudaref/reference.hpp"
#include "files/clock.hpp"
#include "task/between_calls.hpp"
#include "task/rate_bound.hpp"
#include "task/task.hpp"
#include "task/timing_stats.hpp"
#include "parallel/bench_workers/cluster.hpp"
#include "host/bind.hpp"
#include "host/luajson.hpp"

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

// Pushes `items` as a Lua array, push_item(item) pushing each element.
template <class Items, class PushItem>
static void push_array(lua_State* L, const Items& items, PushItem push_item) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    push_item(items[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

static void push_strings(lua_State* L, const std::vector<std::string>& v) {
  push_array(L, v, [L](const std::string& s) { lua_pushlstring(L, s.data(), s.size()); });
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

// bench.cuda(): {available, reason, device, capability, sm, driver_version, nvrtc,
// nvrtc_library} for GPU 0; on a machine without a GPU, its driver or NVRTC, available is
// false and reason says which is missing.
static int bench_cuda(lua_State* L) {
  push_json(L, bench::cuda_probe());
  return 1;
}

// bench.cuda_sandbox({print_bytes = 0}): what a CUDA request's child, confined as every one
// is, gets when it tries the calls its seccomp filter refuses: {fork = "EPERM", execve =
// "EPERM", ...} ("allowed" where one went through), and what it printed (a line on stdout,
// one on stderr, then print_bytes more), kept as a kernel's printf is: kernel_output (the
// first 4 KiB), kernel_output_bytes. Needs no GPU.
static int bench_cuda_sandbox(lua_State* L) {
  double print_bytes = 0;
  if (!lua_isnoneornil(L, 1)) {
    Options t(L, 1, "bench.cuda_sandbox");
    t.get("print_bytes", print_bytes);
    t.done();
  }
  if (!(print_bytes >= 0 && print_bytes <= (1 << 24)))
    throw Error("bench.cuda_sandbox: print_bytes must be from 0 to 16 Mi");
  push_json(L, bench::cuda_sandbox(static_cast<size_t>(print_bytes)));
  return 1;
}

// bench.cuda_compile(source, {entries = {"name", ...}, timeout = 60}): the CUDA C++ source
// compiled in memory by NVRTC for GPU 0 and loaded by the driver, in a child of the
// evaluation process: {status = ok | compile_error | load_error | unavailable |
// runtime_error, log, arch, cubin_bytes, compile_ms, entries (those found)}.
static int bench_cuda_compile(lua_State* L) {
  std::string src = check_string(L, 1, "bench.cuda_compile", "source");
  std::vector<std::string> entries;
  double timeout = 60;
  if (!lua_isnoneornil(L, 2)) {
    Options t(L, 2, "bench.cuda_compile");
    t.get("entries", entries);
    t.get("timeout", timeout);
    t.done();
  }
  try {
    push_json(L, bench::cuda_compile(src, entries, timeout));
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("bench.cuda_compile: ") + e.what());
  }
  return 1;
}

// bench.cuda_run(source, {entry, grid, block, shared_bytes, args, warmup, calls, seed,
// timeout = 60}): the source compiled and launched on GPU 0 in a child of the evaluation
// process (cuda::run): bench.cuda_compile's record, and when it ran {times_ms, wall_ms,
// median_ms, cov, outputs = {each output buffer after the last call}, inputs = {each input
// buffer of that call}, checked_calls (every call, warm-up ones too), checked_per_call (the
// output values of each earlier call kept for bench.cuda_judge's check), kernel_output (what
// the kernel printed, its first 4 KiB), kernel_output_bytes, and where the time went:
// start_ms, compile_ms, load_ms, calls_ms, child_ms, request_ms (docs/tasks.md)}. The inputs are drawn by the
// evaluation process under a key the kernel's process never holds (a fixed `seed` makes
// them known).
// The launch table at `idx`, its timeout taken out (60 s unless given).
static nlohmann::json check_launch(lua_State* L, int idx, const std::string& where, double& timeout) {
  luaL_checktype(L, idx, LUA_TTABLE);
  nlohmann::json launch = to_json(L, idx, where.c_str());
  timeout = 60;
  if (launch.contains("timeout")) {
    if (!launch["timeout"].is_number()) throw Error(where + ": timeout must be a number of seconds");
    timeout = launch["timeout"].get<double>();
    launch.erase("timeout");
  }
  return launch;
}

// bench::cuda_run's record with request_ms, the request's round trip as this process sees it.
static nlohmann::json run_cuda(const std::string& where, const std::string& src, const nlohmann::json& launch,
                               double timeout) {
  try {
    const double t0 = files::monotonic_seconds();
    nlohmann::json rec = bench::cuda_run(src, launch, timeout);
    if (rec.is_object()) rec["request_ms"] = 1000 * (files::monotonic_seconds() - t0);
    return rec;
  } catch (const std::invalid_argument& e) {
    throw Error(where + ": " + e.what());
  }
}

static int bench_cuda_run(lua_State* L) {
  std::string src = check_string(L, 1, "bench.cuda_run", "source");
  double timeout;
  nlohmann::json launch = check_launch(L, 2, "bench.cuda_run", timeout);
  nlohmann::json rec = run_cuda("bench.cuda_run", src, launch, timeout);
  rec.erase("call_outputs");  // the judge's (bench.cuda_judge)
  rec.erase("input_key");
  for (const char* key : {"inputs", "outputs"})
    if (rec.contains(key)) cuda::blobs_to_numbers(rec[key]);
  push_json(L, rec);
  return 1;
}

// A task's integer size variables, {} being either an object or an array to Lua.
static cudaref::Size size_vars(nlohmann::json size, const std::string& where) {
  if (size.empty()) size = nlohmann::json::object();
  if (!size.is_object()) throw Error(where + ": the size must be a table of integers");
  cudaref::Size vars;
  for (auto it = size.begin(); it != size.end(); ++it) {
    if (!it.value().is_number_integer()) throw Error(where + ": size." + it.key() + " must be an integer");
    vars[it.key()] = it.value().get<long long>();
  }
  return vars;
}

// Buffers from a list of lists of numbers (a script's) or of float blobs (a run's,
// cuda::float_blob).
static cudaref::Buffers buffers(nlohmann::json list, const std::string& where, const char* what) {
  if (list.empty()) list = nlohmann::json::array();
  if (!list.is_array()) throw Error(where + ": the " + what + " must be a list of lists of numbers");
  cudaref::Buffers out;
  for (const auto& buffer : list) {
    if (buffer.is_binary()) {
      const std::vector<float> floats = cuda::floats_of(buffer);
      out.emplace_back(floats.begin(), floats.end());
      continue;
    }
    if (!buffer.is_array()) throw Error(where + ": each of the " + what + " must be a list of numbers");
    std::vector<double> values;
    values.reserve(buffer.size());
    for (const auto& v : buffer) {
      if (!v.is_number()) throw Error(where + ": the " + what + " hold a value that is not a number");
      values.push_back(v.get<double>());
    }
    out.push_back(std::move(values));
  }
  return out;
}

// The same from Lua's own lists, read directly: a NaN stays a NaN (JSON has none).
static cudaref::Buffers lua_buffers(lua_State* L, int idx, const std::string& where, const char* what) {
  if (!lua_istable(L, idx)) throw Error(where + ": the " + what + " must be a list of lists of numbers");
  cudaref::Buffers out(static_cast<size_t>(lua_rawlen(L, idx)));
  for (size_t b = 0; b < out.size(); ++b) {
    lua_rawgeti(L, idx, static_cast<lua_Integer>(b + 1));
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      throw Error(where + ": each of the " + what + " must be a list of numbers");
    }
    const size_t n = static_cast<size_t>(lua_rawlen(L, -1));
    out[b].resize(n);
    for (size_t i = 0; i < n; ++i) {
      lua_rawgeti(L, -1, static_cast<lua_Integer>(i + 1));
      const bool number = lua_type(L, -1) == LUA_TNUMBER;
      if (number) out[b][i] = lua_tonumber(L, -1);
      lua_pop(L, 1);
      if (!number) {
        lua_pop(L, 1);
        throw Error(where + ": the " + what + " hold a value that is not a number");
      }
    }
    lua_pop(L, 1);
  }
  return out;
}

static void push_check(lua_State* L, const cudaref::Check& c) {
  lua_createtable(L, 0, 4);
  lua_pushboolean(L, c.ok);
  lua_setfield(L, -2, "ok");
  lua_pushinteger(L, static_cast<lua_Integer>(c.wrong));
  lua_setfield(L, -2, "wrong");
  lua_pushnumber(L, c.max_error);
  lua_setfield(L, -2, "max_error");
  if (c.at_output > 0) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, static_cast<lua_Integer>(c.at_output));
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, static_cast<lua_Integer>(c.at_element));
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, "at");
  }
}

// bench.cuda_check(outputs, reference, atol, rtol): outputs against the reference, every
// element within atol + rtol |ref|, NaN never: {ok, wrong, max_error, at = {output, element}}.
static int bench_cuda_check(lua_State* L) {
  const char* where = "bench.cuda_check";
  const cudaref::Buffers outputs = lua_buffers(L, 1, where, "outputs");
  const cudaref::Buffers reference = lua_buffers(L, 2, where, "reference");
  const double atol = check_number(L, 3, where, "atol");
  const double rtol = check_number(L, 4, where, "rtol");
  try {
    push_check(L, cudaref::check(outputs, reference, atol, rtol));
  } catch (const std::invalid_argument& e) {
    throw Error(std::string(where) + ": " + e.what());
  }
  return 1;
}

// bench.cuda_judge(source, launch, {reference = op, size = {...}, atol =, rtol = 0}):
// bench.cuda_run's record judged here, where the buffers are: the reference computed by
// cudaref from the inputs the run drew, each output checked (bench.cuda_check's rule);
// then every earlier call (cuda/calls.hpp): its inputs drawn again under the run's key, its
// reference computed, the values the evaluation process kept checked (all of them up to
// 4 Mi values over the calls, else as many drawn at positions the kernel never learns);
// "verification_error" with the first miss named (and its call) when one misses,
// max_error and wrong beside, and check_ms, the time of the references and checks. The buffers are not returned: a task's run at its training size holds
// megabytes of them, which a script has no use for.
// What a CUDA run is judged against: the reference op, the task's size, the tolerance.
struct CudaJudge {
  std::string op;
  cudaref::Size vars;
  double atol = 0, rtol = 0;
};

static CudaJudge check_judge(lua_State* L, int idx, const std::string& where) {
  CudaJudge j;
  nlohmann::json size;
  Options t(L, idx, where.c_str());
  t.get("reference", j.op);
  t.get("atol", j.atol);
  t.get("rtol", j.rtol);
  t.push("size");
  if (!lua_isnil(L, -1)) size = to_json(L, -1, where.c_str());
  lua_pop(L, 1);
  t.done();
  if (j.op.empty()) throw Error(where + ": the judge needs a reference op (bench.cuda_reference() lists them)");
  j.vars = size_vars(size, where);
  return j;
}

// A run's record judged where its buffers are, which then leave it.
static void judge_run(nlohmann::json& rec, const nlohmann::json& launch, const CudaJudge& j, const std::string& where) {
  const std::string& op = j.op;
  const cudaref::Size& vars = j.vars;
  const double atol = j.atol, rtol = j.rtol;
  const double checking = files::monotonic_seconds();
  if (rec.value("status", "") == "ok") {
    cudaref::Check c;
    try {
      const cudaref::Buffers ref = cudaref::compute(op, vars, buffers(rec.at("inputs"), where, "inputs"));
      c = cudaref::check(buffers(rec.at("outputs"), where, "outputs"), ref, atol, rtol);
    } catch (const std::invalid_argument& e) {
      throw Error(where + ": " + e.what());
    }
    rec["wrong"] = c.wrong;
    rec["max_error"] = c.max_error;
    if (!c.ok) {
      rec["status"] = "verification_error";
      rec["log"] = "call " + std::to_string(rec.value("checked_calls", 0)) + " (the last): " +
                   cudaref::describe(c, atol, rtol);
    } else {
      bench::set_between_call_workers(bench::machine().cores);  // each call's inputs drawn again on every core
      cuda::CallsCheck calls;
      try {
        calls = cuda::check_calls(
            rec, cuda::parse_launch(launch),
            [&](const cudaref::Buffers& inputs) { return cudaref::compute(op, vars, inputs); }, atol, rtol);
      } catch (const std::invalid_argument& e) {
        throw Error(where + ": " + e.what());
      }
      rec["max_error"] = std::max(c.max_error, calls.max_error);
      if (!calls.ok) {
        rec["status"] = "verification_error";
        rec["wrong"] = calls.wrong;
        rec["log"] = calls.log;
      }
    }
    rec["check_ms"] = 1000 * (files::monotonic_seconds() - checking);
  }
  rec.erase("inputs");
  rec.erase("outputs");
  rec.erase("call_outputs");
  rec.erase("input_key");
}

static int bench_cuda_judge(lua_State* L) {
  const std::string where = "bench.cuda_judge";
  std::string src = check_string(L, 1, where.c_str(), "source");
  double timeout;
  nlohmann::json launch = check_launch(L, 2, where, timeout);
  const CudaJudge judge = check_judge(L, 3, where);
  nlohmann::json rec = run_cuda(where, src, launch, timeout);
  judge_run(rec, launch, judge, where);
  push_json(L, rec);
  return 1;
}

// bench.cuda_batch(items, {timeout = 60}): bench::cuda_batch's records, each item {op =
// "cuda_run", source, launch} or {op = "cuda_sandbox", print_bytes, spin_ms}, answered in
// turn by the evaluation process's warm CUDA child (a fresh one after a run that failed or
// timed out: cuda_child says which), with request_ms the request's round trip. The buffers
// stay behind (bench.cuda_judge_batch judges runs).
static int bench_cuda_batch(lua_State* L) {
  const std::string where = "bench.cuda_batch";
  luaL_checktype(L, 1, LUA_TTABLE);
  nlohmann::json items = to_json(L, 1, where.c_str());
  if (items.empty()) items = nlohmann::json::array();
  double timeout = 60;
  if (!lua_isnoneornil(L, 2)) {
    Options t(L, 2, where.c_str());
    t.get("timeout", timeout);
    t.done();
  }
  nlohmann::json recs;
  const double t0 = files::monotonic_seconds();
  try {
    recs = bench::cuda_batch(items, timeout);
  } catch (const std::invalid_argument& e) {
    throw Error(where + ": " + e.what());
  }
  const double request_ms = 1000 * (files::monotonic_seconds() - t0);
  for (auto& rec : recs) {
    if (!rec.is_object()) continue;
    rec["request_ms"] = request_ms;
    for (const char* key : {"inputs", "outputs", "call_outputs", "input_key"}) rec.erase(key);
  }
  push_json(L, recs);
  return 1;
}

// bench.cuda_judge_batch(kernels, judge): each kernel {source, launch} run by the warm
// CUDA child (bench.cuda_batch: the driver and the context made once, not per kernel) and
// judged as bench.cuda_judge judges it against `judge` ({reference, size, atol, rtol}),
// one kernel a request, so that no more than one run's buffers are held at once. One
// record per kernel, in order, each with request_ms (its own request's round trip).
static int bench_cuda_judge_batch(lua_State* L) {
  const std::string where = "bench.cuda_judge_batch";
  luaL_checktype(L, 1, LUA_TTABLE);
  const CudaJudge judge = check_judge(L, 2, where);
  struct Kernel {
    std::string source;
    nlohmann::json launch;
    double timeout = 60;
  };
  std::vector<Kernel> kernels;
  const lua_Integer n = luaL_len(L, 1);
  for (lua_Integer i = 1; i <= n; ++i) {
    const std::string at = where + ": kernel " + std::to_string(i);
    lua_geti(L, 1, i);
    if (!lua_istable(L, -1)) throw Error(at + " must be a table {source, launch}");
    const int k = lua_gettop(L);
    lua_getfield(L, k, "source");
    if (!lua_isstring(L, -1)) throw Error(at + ": no source");
    Kernel kernel{lua_tostring(L, -1), {}, 60};
    lua_pop(L, 1);
    lua_getfield(L, k, "launch");
    kernel.launch = check_launch(L, lua_gettop(L), at, kernel.timeout);
    lua_pop(L, 2);
    try {
      cuda::parse_launch(kernel.launch);
    } catch (const std::invalid_argument& e) {
      throw Error(at + ": " + e.what());
    }
    kernels.push_back(std::move(kernel));
  }
  nlohmann::json recs = nlohmann::json::array();
  for (size_t i = 0; i < kernels.size(); ++i) {
    nlohmann::json item = {{"op", "cuda_run"}, {"source", kernels[i].source}, {"launch", kernels[i].launch}};
    nlohmann::json rec;
    const double t0 = files::monotonic_seconds();
    try {
      rec = bench::cuda_batch(nlohmann::json::array({std::move(item)}), kernels[i].timeout).at(0);
    } catch (const std::invalid_argument& e) {
      throw Error(where + ": kernel " + std::to_string(i + 1) + ": " + e.what());
    }
    if (rec.is_object()) rec["request_ms"] = 1000 * (files::monotonic_seconds() - t0);
    judge_run(rec, kernels[i].launch, judge, where);
    recs.push_back(std::move(rec));
  }
  push_json(L, recs);
  return 1;
}

// bench.cuda_release(): the warm CUDA child ended, its GPU memory freed (the next
// bench.cuda_batch starts another).
static int bench_cuda_release(lua_State*) {
  bench::cuda_release();
  return 0;
}

// bench.cuda_reference(op, size, inputs): the outputs a CUDA task's kernel must produce,
// computed by libtorch in double precision in this process (cudaref::compute): `size`
// the task's integer variables, `inputs` one list of numbers per input buffer; one list
// per output. bench.cuda_reference() lists the ops with what each takes.
static int bench_cuda_reference(lua_State* L) {
  if (lua_isnoneornil(L, 1)) {
    push_strings(L, cudaref::ops());
    return 1;
  }
  const std::string where = "bench.cuda_reference";
  std::string op = check_string(L, 1, where.c_str(), "op");
  const cudaref::Size vars = size_vars(to_json(L, 2, where.c_str()), where);
  const cudaref::Buffers in = buffers(to_json(L, 3, where.c_str()), where, "inputs");
  cudaref::Buffers out;
  try {
    out = cudaref::compute(op, vars, in);
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("bench.cuda_reference: ") + e.what());
  }
  push_array(L, out, [L](const auto& buffer) {
    push_array(L, buffer, [L](double v) { lua_pushnumber(L, v); });
  });
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

// bench.cuda_yardstick(op, size, {warmup = 2, calls = 20}): libtorch's op on GPU 0 in
// single precision, timed as a CUDA task's yardstick (cudaref::time_op): {status = "ok",
// op, library, times_ms, wall_ms, median_ms, cov}, or {status = "unavailable", log} where
// libtorch or the driver has no GPU.
static int bench_cuda_yardstick(lua_State* L) {
  const std::string where = "bench.cuda_yardstick";
  std::string op = check_string(L, 1, where.c_str(), "op");
  const cudaref::Size vars = size_vars(to_json(L, 2, where.c_str()), where);
  int warmup = 2, calls = 20;
  {
    Options t(L, 3, where.c_str());
    t.get("warmup", warmup);
    t.get("calls", calls);
    t.done();
  }
  nlohmann::json r;
  try {
    const cudaref::Timing t = cudaref::time_op(op, vars, warmup, calls);
    r = {{"status", "ok"}, {"op", op}, {"library", t.library}, {"times_ms", t.times_ms}, {"wall_ms", t.wall_ms},
         {"median_ms", bench::median(t.times_ms)}, {"cov", bench::coefficient_of_variation(t.times_ms)}};
  } catch (const std::invalid_argument& e) {
    throw Error(where + ": " + e.what());
  } catch (const std::runtime_error& e) {
    r = {{"status", "unavailable"}, {"op", op}, {"log", e.what()}};
  }
  push_json(L, r);
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
                    HOST_FN("allowed_symbols", bench_allowed_symbols), HOST_FN("task_inputs", bench_task_inputs), HOST_FN("cuda", bench_cuda), HOST_FN("cuda_sandbox", bench_cuda_sandbox),
                    HOST_FN("cuda_compile", bench_cuda_compile), HOST_FN("cuda_run", bench_cuda_run),
                    HOST_FN("cuda_batch", bench_cuda_batch), HOST_FN("cuda_judge_batch", bench_cuda_judge_batch),
                    HOST_FN("cuda_release", bench_cuda_release),
                    HOST_FN("cuda_reference", bench_cuda_reference), HOST_FN("cuda_check", bench_cuda_check),
                    HOST_FN("cuda_judge", bench_cuda_judge), HOST_FN("cuda_yardstick", bench_cuda_yardstick),
                    HOST_FN("impossible_rate", bench_impossible_rate), HOST_FN("result_fields", bench_result_fields),
                    HOST_FN("check_record", bench_check_record)});
  return 1;
}

}  // namespace host
