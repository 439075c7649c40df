-- The reward schemes on fixed groups: Eq. 3, Experiment 2's normalised reward and the
-- KernelCompare weighting.
local t = require "engine.test"
local reward = require "method.reward"

local function r(status, gflops) return {status = status, gflops = gflops} end

t.test("Eq. 3: a penalty per failure, GFLOPS on success", function()
  local want = {format_violation = -100, library_violation = -100, compile_error = -40,
                timeout = -30, runtime_error = -20, verification_error = -10, rejected = -100}
  for status, penalty in pairs(want) do t.eq(reward.eq3(r(status)), penalty, status) end
  t.eq(reward.eq3(r("ok", 123.5)), 123.5)
  t.eq(reward.eq3(r("ok", 0.0)), 0.0)
  t.eq(#reward.statuses, 8)
  -- A refused measurement never pays better than any honest failure.
  for status, penalty in pairs(reward.penalties) do t.ok(reward.penalties.rejected <= penalty, status) end
end)

t.test("experiment 1's scheme is Eq. 3 kernel by kernel", function()
  t.eq(reward.gflops{r("ok", 10), r("timeout"), r("ok", 2.5), r("format_violation")},
       {10, -30, 2.5, -100})
  t.eq(reward.gflops{}, {})
end)

t.test("experiment 2's scheme: GFLOPS as a percentage of the group's best", function()
  t.eq(reward.normalized{r("ok", 50), r("ok", 200), r("compile_error"), r("ok", 100)},
       {25, 100, -40, 50})
  t.eq(reward.normalized{r("runtime_error"), r("verification_error")}, {-20, -10})
  t.eq(reward.normalized{r("ok", 0), r("timeout")}, {0, -30}, "a best of 0 GFLOPS gives 0")
  local one = reward.normalized{r("ok", 3.7)}
  t.near(one[1], 100)
end)

t.test("KernelCompare: 0.4 compiles + 0.4 correct + 0.2 faster than the baseline", function()
  local got = reward.kernelcompare({r("format_violation"), r("compile_error"), r("timeout"),
                                    r("runtime_error"), r("verification_error"), r("ok", 5),
                                    r("ok", 10), r("ok", 20)}, {baseline_gflops = 10})
  local want = {0, 0, 0.4, 0.4, 0.4, 0.8, 0.8, 1.0}
  for i = 1, #want do t.near(got[i], want[i], 1e-12, "kernel " .. i) end
  t.raises(function() reward.kernelcompare({r("ok", 1)}) end, "needs ctx.baseline_gflops")
end)

t.test("bad results are named", function()
  t.raises(function() reward.gflops{r("ok", 1), r("crashed")} end, "result 2 has unknown status 'crashed'")
  t.raises(function() reward.gflops{r("ok")} end, "result 1 is ok but has no gflops")
  t.raises(function() reward.normalized{"ok"} end, "result 1 is a string")
end)

t.test("schemes are looked up by name and can be replaced", function()
  t.eq(reward.scheme("gflops"), reward.gflops)
  t.raises(function() reward.scheme("speed") end, "no scheme 'speed' (have: gflops, kernelcompare, normalized)")
  reward.schemes.binary = function(results)
    local out = {}
    for i, x in ipairs(results) do out[i] = x.status == "ok" and 1 or 0 end
    return out
  end
  t.eq(reward.scheme("binary"){r("ok", 3), r("timeout")}, {1, 0})
  reward.schemes.binary = nil
end)

t.run()
