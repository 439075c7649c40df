// engine.bench's CUDA functions (engine/cuda, engine/cudaref), for scripts.
//
// bench.cuda() says whether GPU 0, its driver and NVRTC are there, and
// bench.cuda_compile(src, {entries = {...}}) compiles CUDA C++ in memory for it;
// bench.cuda_run runs a kernel, bench.cuda_judge runs and checks it against libtorch's
// reference (bench.cuda_reference, the rule bench.cuda_check); bench.cuda_batch and
// bench.cuda_judge_batch do the same with the evaluation process's warm CUDA child
// (bench.cuda_release ends it); bench.cuda_yardstick times libtorch's own op the same way.
#include "host/mod_bench_cuda.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "cuda/calls.hpp"
#include "cuda/cuda.hpp"
#include "cudaref/check.hpp"
#include "cudaref/reference.hpp"
#include "files/clock.hpp"
#include "task/between_calls.hpp"
#include "task/timing_stats.hpp"
#include "host/bind.hpp"
#include "host/luajson.hpp"

namespace host {

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

// What a run's record carries for its judge alone: its buffers and the inputs' key.
static void drop_run_buffers(nlohmann::json& rec) {
  for (const char* key : {"inputs", "outputs", "call_outputs", "input_key"}) rec.erase(key);
}

// A run's record judged where its buffers are, which then leave it.
static void judge_run(nlohmann::json& rec, const nlohmann::json& launch, const CudaJudge& j, const std::string& where) {
  const double checking = files::monotonic_seconds();
  if (rec.value("status", "") == "ok") {
    cudaref::Check c;
    try {
      const cudaref::Buffers ref = cudaref::compute(j.op, j.vars, buffers(rec.at("inputs"), where, "inputs"));
      c = cudaref::check(buffers(rec.at("outputs"), where, "outputs"), ref, j.atol, j.rtol);
    } catch (const std::invalid_argument& e) {
      throw Error(where + ": " + e.what());
    }
    rec["wrong"] = c.wrong;
    rec["max_error"] = c.max_error;
    if (!c.ok) {
      rec["status"] = "verification_error";
      rec["log"] = "call " + std::to_string(rec.value("checked_calls", 0)) + " (the last): " +
                   cudaref::describe(c, j.atol, j.rtol);
    } else {
      bench::set_between_call_workers(bench::machine().cores);  // each call's inputs drawn again on every core
      cuda::CallsCheck calls;
      try {
        calls = cuda::check_calls(
            rec, cuda::parse_launch(launch),
            [&](const cudaref::Buffers& inputs) { return cudaref::compute(j.op, j.vars, inputs); }, j.atol, j.rtol);
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
  drop_run_buffers(rec);
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
    drop_run_buffers(rec);
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

void set_bench_cuda(lua_State* L) {
  set_functions(L, {HOST_FN("cuda", bench_cuda), HOST_FN("cuda_sandbox", bench_cuda_sandbox),
                    HOST_FN("cuda_compile", bench_cuda_compile), HOST_FN("cuda_run", bench_cuda_run),
                    HOST_FN("cuda_batch", bench_cuda_batch), HOST_FN("cuda_judge_batch", bench_cuda_judge_batch),
                    HOST_FN("cuda_release", bench_cuda_release),
                    HOST_FN("cuda_reference", bench_cuda_reference), HOST_FN("cuda_check", bench_cuda_check),
                    HOST_FN("cuda_judge", bench_cuda_judge), HOST_FN("cuda_yardstick", bench_cuda_yardstick)});
}

}  // namespace host
