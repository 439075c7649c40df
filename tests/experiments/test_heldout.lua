-- heldout.lua: each learning run's final policy and the base model answer the same
-- prompts (SQD's next plan over the lr = 0 run's pools), judged as in the run; the gains
-- are per seed. On the stand-ins a restored trainer's policy writes faster kernels, so
-- its gain is positive in every seed, and the base model's is measured once per seed.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local primitives = require "primitives"

local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local heldout = dofile(engine.scripts[1] .. "/heldout.lua")

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")

t.test("the learned policies beat the base model on the same prompts, seed by seed", function()
  local out = t.tmpdir()
  exp1.run(primitives.parse(exp1, "experiment1", {"--out=" .. out, "--profile=paper", "--G=4", "--steps=2",
                                                  "--prompts_per_step=2", "--size=32", "--opt=O3",
                                                  "--beta=0.0", "--lr=0.0,5e-7", "--seeds=2"}), fakes.deps())
  local deps = fakes.deps()
  local rows, gains = heldout.compare(out, {G = 0, device = "cpu"}, deps)
  t.eq(#rows, 2, "one row per learning run")
  local g = gains["beta=0,lr=5e-07,opt=O3"]
  t.ok(g, "the learning configuration is named without its seed")
  t.eq(#g.reward, 2)
  for i = 1, 2 do t.ok(g.reward[i] > 0, "seed " .. i .. " gains: " .. g.reward[i]) end
  t.eq(deps.policy.loads, 4, "a base model and a learned one per seed")
  t.contains(rows[1], "| 1 | beta=0,lr=5e-07,opt=O3 | 8 |")  -- the eight fixed prompts
  -- a caller sees each comparison as it finishes (heldout.lua rewrites --out then)
  local seen = {}
  heldout.compare(out, {G = 0, device = "cpu"}, fakes.deps(), function(r, by_group)
    seen[#seen + 1] = {#r, #by_group["beta=0,lr=5e-07,opt=O3"].reward}
  end)
  t.eq(seen, {{1, 1}, {2, 2}}, "one call per finished seed, with what is done so far")
  local only = heldout.compare(out, {G = 0, device = "cpu", seeds = "1"}, fakes.deps())
  t.eq(#only, 1, "--seeds=1 compares seed 1 alone")
  t.contains(only[1], "| 1 | beta=0,lr=5e-07,opt=O3 |")
end)

t.test("each learning configuration is compared with the lr = 0 run of its own swept values", function()
  local out = t.tmpdir()
  exp1.run(primitives.parse(exp1, "experiment1", {"--out=" .. out, "--profile=paper", "--G=2", "--steps=1",
                                                  "--prompts_per_step=1", "--size=32", "--opt=O0,O3",
                                                  "--beta=0.0", "--lr=0.0,5e-7"}), fakes.deps())
  local deps = fakes.deps()
  local rows, gains = heldout.compare(out, {G = 0, device = "cpu"}, deps)
  t.eq(#rows, 2)
  t.ok(gains["beta=0,lr=5e-07,opt=O0"] and gains["beta=0,lr=5e-07,opt=O3"], "both levels compared")
  t.eq(deps.policy.loads, 4, "an O0 and an O3 baseline, each with its learner")
  local levels = {}
  for _, b in ipairs(deps.bench.seen_opts) do levels[b.opt] = true end
  t.eq(levels, {O0 = true, O3 = true}, "each side judged at its own level")
end)

t.test("SQD's runs are asked the lr = 0 run's next plan", function()
  local out = t.tmpdir()
  exp2.run(primitives.parse(exp2, "experiment2", {"--out=" .. out, "--iterations=2", "--profile=paper",
                                                  "--G=4", "--size=32", "--pool_size=2", "--opt=O3",
                                                  "--lr=0.0,5e-7", "--seeds=2"}), fakes.deps())
  local rows, gains = heldout.compare(out, {G = 2, device = "cpu"}, fakes.deps())
  t.eq(#rows, 2)
  t.eq(#gains["lr=5e-07,opt=O3"].reward, 2)
  -- the plan over pools of stages 1 and 2 (2 kernels each) and the seed: more than one prompt
  local prompts_asked = tonumber(rows[1]:match("^| 1 | [^|]+ | (%d+) |"))
  t.ok(prompts_asked and prompts_asked > 1, rows[1])
end)

t.test("a directory without learning runs, or without their lr = 0 runs, is refused", function()
  local out = t.tmpdir()
  exp2.run(primitives.parse(exp2, "experiment2", {"--out=" .. out, "--iterations=1", "--profile=paper",
                                                  "--G=2", "--size=32", "--opt=O3", "--lr=0.0"}), fakes.deps())
  t.raises(function() heldout.compare(out, {G = 0, device = "cpu"}, fakes.deps()) end,
           "needs runs with lr = 0 and with lr > 0 of the same seeds")
  local text, ok, code = primitives.engine("heldout.lua")
  t.ok(not ok and code == 2, text)
  t.contains(text, "usage: engine heldout.lua RUN_DIR")
end)

t.run()
