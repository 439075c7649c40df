-- A kernel becomes a run's best only once a second, independent evaluation confirms it:
-- the step's max, Table II and best_kernel.c show the lower of the two figures.
local t = require "engine.test"
local metrics = require "method.metrics"
local results = require "report.results"

-- A benchmark whose second evaluation of a kernel is slower (or fails) than its first.
local function bench_with(second)
  local calls = {}
  return {
    calls = calls,
    evaluate_batch = function(sources, opts)
      local out = {}
      for i, src in ipairs(sources) do
        calls[#calls + 1] = src
        out[i] = second[src] or {status = "ok", gflops = 1}
      end
      return out
    end,
  }
end

local function session_with(bench)
  return setmetatable({deps = {bench = bench}, bench_opts = {}}, require("run.session").Session)
end

t.test("the best kernel is re-measured and the step's max is the lower figure", function()
  local bench = bench_with{fast = {status = "ok", gflops = 40}}
  local s = session_with(bench)
  local rs = {{status = "ok", gflops = 100, code = "fast", reward = 100},
              {status = "ok", gflops = 60, code = "steady", reward = 60},
              {status = "compile_error", reward = -40}}
  local top = s:confirm_best(rs)
  t.eq(top.code, "fast")
  t.eq(bench.calls, {"fast"})
  t.eq(top.confirmed_gflops, 40)
  local summary = metrics.summary(rs)
  t.eq(summary.max_gflops, 40)
  t.eq(summary.max_gflops_measured, 100)
  t.eq(rs[1].reward, 100, "the reward keeps the first measurement")
end)

t.test("a best kernel that fails its second evaluation is not confirmed", function()
  local bench = bench_with{lucky = {status = "verification_error", gflops = 0}}
  local s = session_with(bench)
  local rs = {{status = "ok", gflops = 500, code = "lucky", reward = 500}}
  s:confirm_best(rs)
  t.eq(rs[1].confirmed_gflops, 0)
  t.eq(rs[1].second.status, "verification_error")
  t.eq(metrics.summary(rs).max_gflops, 0)
end)

t.test("the report's best is the best confirmed kernel, with both figures", function()
  local dir = t.tmpdir() .. "/run"
  local run = store.open(dir, {config = {experiment = "experiment1", config = {lr = 0}}})
  run:add_sample{iteration = 1, status = "ok", gflops = 300, code = "a",
                 extra = {confirmed_gflops = 0, second = {status = "timeout"}}}
  run:add_sample{iteration = 1, status = "ok", gflops = 200, code = "b",
                 extra = {confirmed_gflops = 150, second = {status = "ok", gflops = 150}}}
  run:add_sample{iteration = 1, status = "ok", gflops = 250, code = "c"}  -- never re-measured
  run:close()
  local exp = results.load(dir)
  local best = exp.configs[1].best
  t.eq(best.code, "b")
  t.eq(best.gflops, 150)
  t.eq(best.measured_gflops, 200)
  t.contains(results.table2(exp), "150.00 (first 200.00)")
end)
t.run()
