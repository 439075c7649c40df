-- The evaluation's record as engine/wire/result_record.hpp declares it: what the judges
-- give keeps to it, what does not is named, and the scripts keep the fields it marks.
local t = require "engine.test"
local evaluate = require "method.evaluate"

local SIG = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)"
local NAIVE = SIG .. [[ {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}]]

t.test("every field is declared once, with a kind and a meaning", function()
  local seen, kinds = {}, {}
  for _, f in ipairs(bench.result_fields()) do
    t.ok(not seen[f.name], f.name .. " declared twice")
    seen[f.name] = true
    t.ok(#f.meaning > 10, f.name .. " has a meaning")
    kinds[f.kind] = true
  end
  for _, name in ipairs{"status", "gflops", "times", "max_rel_error", "features", "same_code_as", "thread_trials",
                        "kernel_output", "vs_yardstick"} do
    t.ok(seen[name], name .. " is declared")
  end
  t.eq(kinds["a number"] and kinds["a string"] and kinds["an array of numbers"] and kinds["an object"], true)
end)

t.test("the fields the scripts keep with a judged kernel are the ones marked kept", function()
  local kept = {}
  for _, f in ipairs(bench.result_fields()) do
    if f.kept then kept[#kept + 1] = f.name end
  end
  table.sort(kept)
  t.eq(kept, {"backend", "compile_ms", "counters", "counters_unavailable", "cov", "cuda_status", "features", "gbps",
              "gflops", "kernel_output", "max_rel_error", "median", "message", "min", "node", "remarks", "status",
              "times", "vs_yardstick"})
end)

t.test("a record off its declaration is named by its field", function()
  t.eq(bench.check_record({status = "ok", gflops = 1.5, times = {0.1, 0.2}, features = {}}), nil)
  t.eq(bench.check_record({status = "compile_error", times = {}, thread_trials = {}}), nil, "empty tables")
  t.eq(bench.check_record({status = "ok", gflop = 1.5}), "an undeclared field 'gflop'")
  t.eq(bench.check_record({status = "ok", gflops = "fast"}), "field 'gflops' is a string where a number is declared")
  t.eq(bench.check_record({status = "ok", times = {"a"}}),
       "field 'times' is an array holding a string where an array of numbers is declared")
  t.eq(bench.check_record({status = "ok", same_code_as = 1.5}),
       "field 'same_code_as' is a number where an integer is declared")
  t.eq(bench.check_record({gflops = 1}), "the record has no status")
end)

t.test("the evaluation process's records keep to it, through every back end, failures and shares included", function()
  local broken = SIG .. " { C[0] = A[0] * B[0] }"        -- a compile error
  local wrong = SIG .. " { for (int i = 0; i < M * N; i++) C[i] = 1; }"
  for _, backend in ipairs(bench.backends()) do
    local opts = {backend = backend, runs = 1, warmup = 0, share = true, problem = {M = 32, N = 32, K = 32}}
    local rs = bench.evaluate_batch({NAIVE, broken, wrong, (NAIVE:gsub("double s", "double  s"))}, opts)
    t.eq({rs[1].status, rs[2].status, rs[3].status}, {"ok", "compile_error", "verification_error"}, backend)
    for i, r in ipairs(rs) do t.eq(bench.check_record(r), nil, backend .. " " .. i) end
  end
  local ref = bench.reference({problem = {M = 32, N = 32, K = 32}, runs = 2, max_runs = 2, warmup = 1})
  t.eq(ref.status, "ok")
  t.eq(bench.check_record(ref), nil)
  t.ok(#ref.yardstick_trials >= 1)
end)

t.test("a judge whose record is off the declaration stops the evaluation, naming the field", function()
  local judge = {}
  function judge.evaluate_batch(sources)
    local out = {}
    for i = 1, #sources do out[i] = {status = "ok", gflops = 1.0, speedup = 2} end
    return out
  end
  t.raises(function() evaluate.completions({NAIVE}, {bench = judge}) end,
           "the judge's record of kernel 1: an undeclared field 'speedup'")
end)
