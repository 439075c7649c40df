-- recompute.lua: every figure of docs/results.md matches the raw data in the tree; a page
-- whose figure was altered, or whose sentence is gone, is reported as a mismatch and fails
-- the script; missing raw data is reported as such; a confirmatory experiment's claims
-- work on another data folder (the way E2 will be added).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path
local t = require "engine.test"
local fakes = require "fakes"
local recompute = dofile(engine.scripts[1] .. "/recompute.lua")

local root = here .. "/../.."
local page = root .. "/docs/results.md"

-- A copy of the page with `from` (plain text, present once) replaced by `to`.
local function altered_page(from, to)
  local text = t.read(page)
  local at = text:find(from, 1, true)
  t.ok(at, "the page no longer holds " .. from)
  t.ok(not text:find(from, at + 1, true), "the page holds " .. from .. " more than once")
  local path = t.tmpdir() .. "/results.md"
  t.write(path, text:sub(1, at - 1) .. to .. text:sub(at + #from))
  return path
end

local function not_ok(lines)
  local out = {}
  for _, line in ipairs(lines) do if not line:match("^ok ") then out[#out + 1] = line end end
  return out
end

t.test("every figure of docs/results.md matches its raw data", function()
  local lines, failures = recompute.run{data = root, results = page}
  t.eq(not_ok(lines), {})
  t.eq(failures, 0)
  t.ok(#lines >= 50, "only " .. #lines .. " claims")
end)

t.test("an altered figure is a mismatch naming both values", function()
  local lines, failures = recompute.run{data = root, results = altered_page("+10.43 ± 1.68", "+10.53 ± 1.68")}
  t.eq(failures, 1)
  local bad = not_ok(lines)
  t.contains(bad[1], "MISMATCH")
  t.contains(bad[1], "primary")
  t.contains(bad[1], 'expected "+10.43" (raw data) got "+10.53" (page)')
end)

t.test("a figure's sentence missing from the page is a mismatch", function()
  local path = altered_page("| run's final mean reward (last 10 steps) | +30.22",
                           "| final reward | +30.22")
  local lines, failures = recompute.run{data = root, results = path}
  t.eq(failures, 1)
  t.contains(not_ok(lines)[1], "got no such text in the page")
end)

t.test("the script fails when a claim does not match", function()
  local path = altered_page("| O1 | 259.6 / 283.3 |", "| O1 | 259.6 / 283.4 |")
  local err = t.raises(function()
    recompute.main({[0] = "recompute.lua", "--results=" .. path, "--data=" .. root}, {write = function() end})
  end, "do not match their raw data")
  t.contains(tostring(err), "1 of ")
end)

t.test("raw data missing from the tree is reported, not recomputed", function()
  local lines, failures = recompute.run{data = t.tmpdir(), results = page}
  t.eq(failures, #lines)
  for _, line in ipairs(lines) do t.ok(line:match("^NO RAW DATA "), line) end
end)

t.test("slots are filled from the figures in their formats", function()
  local text, slots = recompute.fill("gain {g.mean:%+.2f} ± {g.half:%.2f} (per seed {g.values:%+.1f}); {n:%d} of 3",
                                     {g = {mean = 1.234, half = 0.5, values = {1, -0.25, 2}}, n = 3})
  t.eq(text, "gain +1.23 ± 0.50 (per seed +1.0, -0.2, +2.0); 3 of 3")
  t.eq(slots, {"+1.23", "0.50", "+1.0, -0.2, +2.0", "3"})
  t.eq(recompute.fill("{x:%.0f}", {x = -0.0}), "0")
  t.raises(function() recompute.fill("{missing:%d}", {}) end, "no value 'missing'")
end)

-- A small confirmatory data folder: 3 seeds, one held-out part, lr = 0 and lr = 1e-4 runs.
-- Per seed s the learned kernels score 10 + s points above the base model's, and the
-- learning run's final reward is 10 + 2 (s - 1) above its lr = 0 run's.
local function make_confirmatory(dir)
  local seeds, gains = fakes.heldout_seeds("lr=0.0001,opt=O3", 3)
  json.write(dir .. "/heldout.json", {parts = {"sizes"}, seeds = seeds,
                                      gains = {["lr=0.0001,opt=O3"] = {overall = {roofline = {values = gains}}}}})
  for _, lr in ipairs{0, 1e-4} do
    for s = 1, 3 do
      local run = string.format("%s/runs/lr=%s,opt=O3,seed=%d", dir, lr == 0 and "0" or "0.0001", s)
      sys.mkdir(run)
      json.write(run .. "/config.json", {G = 8, size = 64, prompts_per_step = 1,
                                         config = {lr = lr, opt = "O3", seed = s}})
      local lines = {}
      for step = 1, 4 do
        local reward = (lr == 0 or step < 4) and 10 or 20 + 2 * (s - 1)
        lines[step] = json.encode{kind = "step", step = step, mean_reward = reward, max_gflops = 50 + step, kernels = 8}
      end
      t.write(run .. "/metrics.jsonl", table.concat(lines, "\n") .. "\n")
    end
  end
end

t.test("a confirmatory experiment's claims work on another data folder", function()
  local data = t.tmpdir()
  sys.mkdir(data .. "/data/confirmatory/e2/runs")
  make_confirmatory(data .. "/data/confirmatory/e2")
  local texts = {
    {label = "primary", figure = "heldout",
     text = "gain: {overall.roofline.mean:%+.2f} ± {overall.roofline.half:%.2f} points "
       .. "(per seed {overall.roofline.values:%+.0f}), permutation p = {overall.roofline.perm_p:%.2f}"},
    {label = "final reward", figure = "runs",
     text = "final {gain.final.mean:%+.2f} ± {gain.final.half:%.2f} (last {final_points:%d} steps of {points:%d}, "
       .. "lr = {learned_lr:%s})"},
  }
  local claims = {}
  for _, c in ipairs(require("report.claims_confirmatory").experiment("E2", "data/confirmatory/e2", texts)) do
    if not c.label:find("report.md", 1, true) then claims[#claims + 1] = c end  -- no report in this folder
  end
  local path = data .. "/results.md"
  -- 11, 12, 13: mean 12, sd 1, t(2) = 4.3027; 10, 12, 14: sd 2
  t.write(path, "gain: +12.00 ± 2.48 points (per seed +11, +12, +13), permutation p = 0.25\n"
              .. "final +12.00 ± 4.97 (last 1 steps of 4, lr = 1e-4)\n")
  local lines, failures = recompute.run{data = data, results = path, claims = claims}
  t.eq(not_ok(lines), {})
  t.eq(failures, 0)
  t.eq(#lines, 3)
  t.write(path, "gain: +12.00 ± 2.48 points (per seed +11, +12, +13), permutation p = 0.25\n"
              .. "final +13.00 ± 4.97 (last 1 steps of 4, lr = 1e-4)\n")
  local _, failures2 = recompute.run{data = data, results = path, claims = claims}
  t.eq(failures2, 1)
end)

t.test("Holm's procedure steps down and stops at its first failure", function()
  local claims = require "report.claims"
  local h = claims.holm({a = 0.01, b = 0.04, c = 0.03}, 0.05)
  t.near(h.a.threshold, 0.05 / 3, 1e-12)
  t.eq(h.a.passes, true)
  t.near(h.c.threshold, 0.025, 1e-12)
  t.eq(h.c.passes, false)  -- 0.03 is not below 0.05/2
  t.near(h.b.threshold, 0.05, 1e-12)
  t.eq(h.b.passes, false)  -- below 0.05, but the procedure stopped before it
  local all = claims.holm({O0 = 0.00195, O1 = 0.00195, O3 = 0.00195}, 0.05)
  t.eq(all.O0.passes and all.O1.passes and all.O3.passes, true)
end)

t.test("held-out comparisons run in pieces pool their seeds; a seed in both is refused, or taken from the file named for it", function()
  local claims = require "report.claims"
  local data = t.tmpdir()
  local dir = data .. "/c"
  sys.mkdir(dir .. "/runs")
  make_confirmatory(dir)
  local whole = json.read(dir .. "/heldout.json")
  json.write(dir .. "/first.json", {parts = whole.parts, seeds = {whole.seeds[1], whole.seeds[2]}})
  json.write(dir .. "/second.json", {parts = whole.parts, seeds = {whole.seeds[3]}})
  local d = claims.data(data)
  local pooled = claims.heldout(d, {"c/first.json", "c/second.json"})
  t.eq(pooled.overall.roofline.values, {11, 12, 13})
  t.near(pooled.overall.roofline.half, claims.heldout(d, "c/heldout.json").overall.roofline.half, 1e-12)
  t.eq(select(1, claims.heldout_agreement(d, {"c/first.json", "c/second.json"})), "18 gains")  -- 3 seeds x 3 figures x (overall, sizes)
  json.write(dir .. "/again.json", {parts = whole.parts, seeds = {whole.seeds[2]}})
  t.raises(function() claims.heldout(d, {"c/first.json", "c/again.json"}) end, "seed 2 is also in c/first.json")
  json.write(dir .. "/other.json", {parts = {"wordings"}, seeds = {whole.seeds[3]}})
  t.raises(function() claims.heldout(d, {"c/first.json", "c/other.json"}) end, "parts wordings")
  -- a file that compared seeds again gives only the seeds named for it
  local picked = claims.heldout(d, {"c/first.json", {"c/heldout.json", seeds = {3}}})
  t.eq(picked.overall.roofline.values, {11, 12, 13})
  t.eq(select(1, claims.heldout_agreement(d, {"c/first.json", {"c/heldout.json", seeds = {3}}})), "18 gains")
  t.raises(function() claims.heldout(d, {"c/first.json", {"c/heldout.json", seeds = {2, 3}}}) end,
           "seed 2 is also in c/first.json")
  t.raises(function() claims.heldout(d, {{"c/second.json", seeds = {1}}}) end,
           "c/second.json (seeds 1): none of the seeds asked for is there")
  -- one half's runs: only its seeds are paired
  local half = claims.runs_from_dirs(d, "c/runs", {1, 2})
  t.eq(half.gain.final.values, {10, 12})
  t.eq(#claims.runs_from_dirs(d, "c/runs").gain.final.values, 3)
end)

t.test("the repository's Table II section names every level's verdict from the pooled data", function()
  local lines, failures = recompute.run{}
  local seen = 0
  for _, line in ipairs(lines) do
    if line:find("[Confirmatory Table II]", 1, true) then
      seen = seen + 1
      t.eq(line:sub(1, 2), "ok")
    end
  end
  t.eq(seen, 18)
  t.eq(failures, 0)
end)

t.run()
