-- engine.bench from Lua: results, options, errors.
local t = require "engine.test"

-- The straightforward triple loop: the matmul task's plain test kernel.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local naive = dofile(here .. "/tasks/matmul.lua").plain
local small = {M = 48, N = 40, K = 32}

t.test("evaluate returns every documented field", function()
  local r = bench.evaluate(naive, {problem = small, runs = 4, warmup = 2, threads = 1})
  t.eq(r.status, "ok", r.message)
  t.ok(r.gflops > 0)
  t.ok(#r.times >= 4 and #r.times <= 10, #r.times)  -- more while their spread is large
  t.ok(r.min <= r.median)
  t.ok(r.compile_ms > 0)
  t.ok(r.max_rel_error < 1e308)  -- checked and finite (ok: within the bound, element by element)
  t.eq(type(r.message), "string")
  t.eq(r.backend, r.options.backend)  -- no fallback happened
  t.eq(r.fallback, false)
  t.eq(r.options.runs, 4)
  t.eq(r.options.warmup, 2)
  t.eq(r.options.threads, 1)
  t.eq(r.options.problem.M, 48)
  t.eq(r.options.opt, "O3")
  t.eq(r.options.verify, "fp64")
  t.eq(r.options.timeout, 8)
  t.ok(r.options.march:find("^%-march="), r.options.march)
  -- one statistic: the fastest timed call
  local fastest = math.huge
  for _, x in ipairs(r.times) do fastest = math.min(fastest, x) end
  t.eq(r.min, fastest)
  t.near(r.gflops, 2 * 48 * 40 * 32 / fastest * 1e-9, 1e-9)
end)

t.test("statuses come back per kernel in a batch", function()
  local rs = bench.evaluate_batch({naive, "void matmul_optimized( {", (naive:gsub("k < K", "k < K - 1"))},
                                  {problem = small, backend = "gcc"})
  t.eq(#rs, 3)
  t.eq(rs[1].status, "ok")
  t.eq(rs[2].status, "compile_error")
  t.contains(rs[2].message, "kernel.c:1:")
  t.eq(rs[3].status, "verification_error")
  t.contains(rs[3].message, "wrong result")
  t.eq(#bench.evaluate_batch({}, {problem = small}), 0)
end)

t.test("loads and checks split over the calls' threads judge as one thread does", function()
  -- 128 x 128 outputs: two parts on two threads; the wrong kernel skips the last k.
  local wrong = naive:gsub("k < K", "k < K - 1")
  local o = {problem = {M = 128, N = 128, K = 64, seed = 3}, threads = 2, backend = "gcc", split_checks = false}
  local one = bench.evaluate_batch({naive, wrong}, o)
  o.split_checks = nil  -- the default
  local split = bench.evaluate_batch({naive, wrong}, o)
  t.eq({split[1].status, split[2].status}, {"ok", "verification_error"})
  t.eq(split[2].message, one[2].message)  -- the same first wrong element, named alike
  t.eq(split[1].options.split_checks, true)
  t.eq(one[1].options.split_checks, nil)  -- absent: one thread, as every record before the default
end)

t.test("kernels of a batch with the same object code run once and share the measurement, on both back ends", function()
  -- Other names and a comment, the same instructions (naive with i, j, k, s renamed); then
  -- the same loops with another constant, which must not share.
  local renamed = "// renamed\n" .. naive:gsub("%f[%w_][ijks]%f[^%w_]", {i = "row", j = "col", k = "p", s = "acc"})
  local scaled = (naive:gsub("C%[i %* N %+ j%] = s;", "C[i * N + j] = s * 1.0000001;"))
  for _, backend in ipairs(bench.backends()) do
    local rs = bench.evaluate_batch({naive, scaled, renamed}, {problem = small, threads = 1, backend = backend})
    t.eq({rs[1].status, rs[2].status, rs[3].status}, {"ok", "verification_error", "ok"}, backend)
    t.eq({rs[1].same_code_as, rs[2].same_code_as, rs[3].same_code_as}, {nil, nil, 0}, backend)
    t.eq(rs[3].times, rs[1].times, backend)  -- one set of calls
    t.eq(rs[3].gflops, rs[1].gflops, backend)
    t.ok(rs[3].compile_ms > 0 and rs[3].compile_ms ~= rs[1].compile_ms, backend)  -- its own compile
    -- Measured apart when asked: two sets of calls.
    local apart = bench.evaluate_batch({naive, renamed}, {problem = small, threads = 1, backend = backend,
                                                          share = false})
    t.eq({apart[1].status, apart[2].status, apart[2].same_code_as}, {"ok", "ok", nil}, backend)
    t.ok(apart[1].call_starts[1] ~= apart[2].call_starts[1], backend)
    -- Across pools: with a pool of one, the first has run before the copy is compiled.
    local one = bench.evaluate_batch({naive, renamed}, {problem = small, threads = 1, backend = backend, pool = 1,
                                                        hold = false})
    t.eq({one[2].status, one[2].same_code_as}, {"ok", 0}, backend)
    t.ok(one[2].compile_start > one[1].run_end, backend)
    -- Holding the compiles under way instead (the default): whichever compiled first runs
    -- alone, and the other, held or compiled after it, takes its measurement.
    local held = bench.evaluate_batch({naive, renamed}, {problem = small, threads = 1, backend = backend, pool = 1})
    local copy = held[2].same_code_as == 0 and 2 or held[1].same_code_as == 1 and 1 or nil
    t.ok(copy, backend .. ": one of the two shares the other's measurement")
    t.eq({held[1].status, held[2].status}, {"ok", "ok"}, backend)
    t.eq(held[1].times, held[2].times, backend)
    t.eq(held[1].options.hold, true, backend)
  end
end)

t.test("the record carries gcc's remarks on the kernel's loops, from either back end", function()
  local ikj = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (int i = 0; i < M; i++) {
    for (int j = 0; j < N; j++) C[i * N + j] = 0;
    for (int k = 0; k < K; k++) {
      double a = A[i * K + k];
      for (int j = 0; j < N; j++) C[i * N + j] += a * B[k * N + j];
    }
  }
}
]]
  for _, backend in ipairs({"gccjit", "gcc"}) do
    local r = bench.evaluate(ikj, {problem = small, backend = backend, threads = 1})
    t.eq(r.status, "ok", r.message)
    t.contains(r.remarks, "kernel.c:", backend)
    t.contains(r.remarks, ": optimized: loop vectorized", backend)
    t.ok(#r.remarks <= 1500, #r.remarks)
    local o0 = bench.evaluate(ikj, {problem = small, backend = backend, threads = 1, opt = "O0"})
    t.eq(o0.remarks, nil, backend .. ": at O0 nothing is vectorised and nothing is said")
  end
  -- the naive kernel's outer loops hold other loops and control flow: not vectorised, and why
  local said = bench.evaluate(naive, {problem = small, threads = 1}).remarks
  t.contains(said, ": missed: couldn't vectorize loop")
  t.contains(said, ": missed: not vectorized: ")
end)

t.test("sources reach the compiler byte for byte", function()
  -- Not valid UTF-8: must arrive unchanged (gcc names the byte), not replaced.
  local r = bench.evaluate("/* caf\xe9 */\nvoid matmul_optimized(double *A, double *B, double *C,"
                           .. " int M, int N, int K) { \xff }", {problem = small, backend = "gcc"})
  t.eq(r.status, "compile_error")
  t.contains(r.message, "stray '\\377'")
end)

t.test("library calls and hangs are classified", function()
  local blas = bench.evaluate([[
#include <cblas.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, A, K, B, N, 0.0, C, N);
}]], {problem = small})
  t.eq(blas.status, "library_violation")
  t.contains(blas.message, "cblas_dgemm")
  local hang = bench.evaluate("void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)"
                              .. " { for (volatile int i = 0; ; i++); }", {problem = small, timeout = 0.5})
  t.eq(hang.status, "timeout")
  t.contains(hang.message, "0.5 s")
end)

t.test("the engine keeps working after a kernel the sandbox stops", function()
  local fork = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (;;) { long r; __asm__ volatile("syscall" : "=a"(r) : "a"(57L) : "rcx", "r11", "memory"); }
}]]
  local r = bench.evaluate(fork, {problem = small, backend = "gcc"})
  t.eq(r.status, "runtime_error")
  t.contains(r.message, "forbidden system call 'fork'")
  local again = bench.evaluate(naive, {problem = small})
  t.eq(again.status, "ok", again.message)
  t.ok(again.max_rel_error < 1e308)
end)

t.test("reference and machine", function()
  local ref = bench.reference{problem = small, runs = 2}
  t.eq(ref.status, "ok", ref.message)
  t.eq(ref.backend, "openblas")
  t.ok(ref.gflops > 0)
  -- The fastest thread count: all cores first, then halved while faster.
  local cores = bench.machine().cores
  t.eq(ref.thread_trials[1].threads, cores)
  local fastest = ref.thread_trials[1]
  for i, trial in ipairs(ref.thread_trials) do
    if i > 1 then t.eq(trial.threads, ref.thread_trials[i - 1].threads // 2) end
    if trial.median < fastest.median then fastest = trial end
  end
  t.eq(ref.options.threads, fastest.threads)
  t.eq(ref.median, fastest.median)
  local last = ref.thread_trials[#ref.thread_trials]
  t.ok(last.threads == 1 or last.median >= fastest.median, "stops at the first slower count")
  t.ok(#ref.times >= 2 and ref.options.warmup == 5, "a user's warm pool: 5 untimed calls")
  local one = bench.reference{problem = small, threads = 1, runs = 3, max_runs = 3}
  t.eq(one.thread_trials, nil)
  t.eq(#one.times, 3)
  local m = bench.machine()
  t.ok(m.cores >= 1)
  t.ok(m.peak_gflops > 0)
  t.contains(m.peak_formula, "GFLOPS")
  t.eq(type(m.isa), "table")
  t.ok(m.march:find("^%-march="))
  t.ok(#bench.backends() >= 1)
end)

t.test("bad arguments are errors naming the problem", function()
  t.raises(function() bench.evaluate(naive, {runz = 3}) end, "unknown option 'runz'")
  t.raises(function() bench.evaluate(naive, {opt = "O4"}) end, "opt must be one of O0, O1, O2, O3, Os")
  t.raises(function() bench.evaluate(naive, {verify = "all"}) end, "expected one of")
  t.raises(function() bench.evaluate(naive, {runs = 0}) end, "runs must be between")
  t.raises(function() bench.evaluate(naive, {timeout = "8"}) end, "timeout")
  t.raises(function() bench.evaluate(naive, {backend = "icc"}) end, "unknown back end 'icc'")
  t.raises(function() bench.evaluate(naive, {problem = {M = 0}}) end, "problem.M must be between")
  t.raises(function() bench.evaluate(naive, {problem = {L = 3}}) end, "unknown field 'L'")
  t.raises(function() bench.evaluate(naive, {problem = {c_init = "one"}}) end, "c_init")
  t.raises(function() bench.evaluate(naive, {problem = 5}) end, "'problem' must be a table")
  t.raises(function() bench.evaluate(naive, {march = "native; rm"}) end, "not a CPU name")
  t.raises(function() bench.evaluate({}) end, "bench.evaluate")
  t.raises(function() bench.evaluate_batch({naive, 7}) end, "bench.evaluate_batch")
  t.raises(function() bench.reference{threads = -1} end, "threads")
  t.raises(function() bench.evaluate(naive, {warmup = 4, max_runs = 61}) end, "at most 64")
  t.raises(function() bench.evaluate(naive, {cov_target = -1}) end, "cov_target")
  t.raises(function() bench.evaluate(naive, {pool = 0}) end, "pool must be between 1 and 4096")
  t.raises(function() bench.evaluate(naive, {share = "yes"}) end, "share")
end)

t.test("submitted batches come back as evaluate_batch returns them, whichever is waited for first", function()
  local bad = naive:gsub("%+= A", "+= 2 * A")
  local first = bench.submit_batch({naive, bad}, {problem = small, threads = 1})
  local second = bench.submit_batch({bad, "void matmul_optimized( {"}, {problem = small, threads = 1})
  local b = second:wait()
  t.ok(first:ready(), "the batch submitted first is done when the second is")
  local a = first:wait()
  t.eq({a[1].status, a[2].status}, {"ok", "verification_error"})
  t.eq({b[1].status, b[2].status}, {"verification_error", "compile_error"})
  t.eq(first:wait()[1].status, "ok", "waiting again gives the same results")
  t.raises(function() bench.submit_batch({naive}, {threads = -1}) end, "threads")
  -- dropped without a wait: the engine goes on (a batch not yet started is skipped)
  for _ = 1, 3 do bench.submit_batch({naive}, {problem = small, threads = 1}) end
  collectgarbage()
  t.eq(bench.evaluate_batch({naive}, {problem = small, threads = 1})[1].status, "ok")
end)

t.run()
