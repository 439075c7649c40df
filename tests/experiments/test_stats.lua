-- The statistics over seeds (scripts/lib/core/stats.lua): the exact sign and permutation tests
-- on hand-counted cases, and the power simulation against what theory says of it.
local t = require "engine.test"
local stats = require "core.stats"
local seed_results = require "report.seed_results"

t.test("the sign test is the exact binomial tail, two-sided, zeros dropped", function()
  local s = stats.sign_test({1, 2, 3, 4, 5, 6})
  t.eq(s.n, 6); t.eq(s.positive, 6)
  t.near(s.p, 2 / 64, 1e-12, "six of six")
  t.near(stats.sign_test({1, 1, 1, 1}).p, 0.125, 1e-12, "four seeds can never reach 0.05")
  t.eq(stats.sign_test({1, -1}).p, 1, "capped at 1")
  t.eq(stats.sign_test({0, 1, 2}).n, 2, "a zero difference is no sign")
  -- 7 of 8 positive: 2 * (1 + 8) / 256
  t.near(stats.sign_test({1, 1, 1, 1, 1, 1, 1, -1}).p, 18 / 256, 1e-12)
  t.eq(stats.sign_test({}).p, 1)
end)

t.test("the permutation test counts the sign flips whose sum reaches the observed one", function()
  -- +-1 +-2 +-3: sums 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 in 2 of 8
  local p = stats.permutation_test({1, 2, 3})
  t.ok(p.exact); t.near(p.p, 0.25, 1e-12)
  t.near(stats.permutation_test({5, 5, 5, 5, 5, 5}).p, 2 / 64, 1e-12)
  -- a large negative outlier weighs in the mean, not only in the sign
  t.ok(stats.permutation_test({1, 1, 1, 1, 1, -20}).p > 0.5)
  t.ok(stats.sign_test({1, 1, 1, 1, 1, -20}).p < 0.25)
  -- beyond exact_max: sampled from a fixed seed, the same p each time
  local xs = {}
  for i = 1, 18 do xs[i] = 1 + i / 10 end
  local a, b = stats.permutation_test(xs), stats.permutation_test(xs)
  t.ok(not a.exact); t.eq(a.p, b.p, "reproducible")
  t.ok(a.p < 1e-4, "all 18 positive: " .. a.p)
  t.eq(seed_results.interval, stats.interval, "the report's intervals are the same functions")
end)

t.test("power: the false-positive rate at no effect, and the seeds a known effect needs", function()
  local null = stats.power{effect = 0, sd = 1, n = 8, trials = 4000}
  t.ok(null.t > 0.03 and null.t < 0.075, "t rejects about 5% at no effect: " .. null.t)
  t.ok(null.sign < 0.05, "the exact sign test is conservative: " .. null.sign)
  local big = stats.power{effect = 10, sd = 1, n = 4, trials = 500}
  t.eq(big.t, 1.0); t.eq(big.sign, 0.0, "4 seeds: the sign test can never reject")
  -- a paired t-test for an effect of one deviation reaches 80% power at n = 10 (the
  -- noncentral t gives 0.80 at n = 10 and 0.75 at n = 9)
  local n = stats.seeds_for{effect = 1, sd = 1, test = "t", trials = 4000}
  t.ok(n >= 9 and n <= 11, "seeds for d = 1: " .. tostring(n))
  local s = stats.seeds_for{effect = 10, sd = 1, test = "sign", trials = 200}
  t.eq(s, 6, "the first n whose smallest p is below 0.05")
  t.raises(function() stats.power{effect = 1, sd = 0, n = 5} end, "sd > 0")
end)

t.test("power.lua plans seeds from pilot gains and refuses what is not a number", function()
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local power = dofile(here .. "/../../scripts/experiments/power.lua")
  local base = {values = "", effect = 0.0, sd = 0.0, target = 0.8, max_n = 8, trials = 300, _ = {}}
  local o = setmetatable({values = "10,12,8,11,9,10"}, {__index = base})
  local lines, need = power.run(o)
  t.contains(lines[1], "6 gains, mean +10.00")
  t.contains(table.concat(lines, "\n"), "| 8 |")
  t.ok(need.t and need.t <= 3, "d = 7: three seeds suffice for t")
  t.eq(need.sign, 6, "and six for the sign test")
  -- a smaller effect to plan for needs more seeds than the pilots' own
  local _, small = power.run(setmetatable({values = "10,12,8,11,9,10", effect = 1.5}, {__index = base}))
  t.ok(small.t == nil or small.t > need.t)
  -- a stricter level needs more seeds: with 6 the sign test's smallest p, 0.031, misses 0.0167
  local _, strict = power.run(setmetatable({values = "10,12,8,11,9,10", alpha = 0.05 / 3}, {__index = base}))
  t.eq(strict.sign, 7)
  t.raises(function() power.run(setmetatable({values = "1,x"}, {__index = base})) end, "'x' is not a number")
  t.raises(function() power.run(setmetatable({values = "3,3,3"}, {__index = base})) end, "no spread")
end)

t.run()
