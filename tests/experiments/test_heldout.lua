-- heldout.lua: each learning run's final policy and the base model answer the same
-- prompts, and each prompt's kernels of both are timed in one batch, taking turns. With
-- --prompts=heldout they are the three held-out parts (another size, other wordings, the
-- held-out tasks); with --prompts=train the training prompts, as before. On the stand-ins
-- a restored trainer's policy writes faster kernels, so its gain is positive in every
-- seed, and the base model is loaded once per seed.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local primitives = require "primitives"
local prompts = require "method.prompts"
local tasks = require "engine.tasks"
local wiring = require "method.wiring"
local evaluate = require "method.evaluate"

local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local heldout = dofile(engine.scripts[1] .. "/heldout.lua")

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")

local KEY = "beta=0,lr=5e-07,opt=O3"

-- A sweep of experiment 1 on the stand-ins in a fresh directory: matmul at size 32 with
-- beta = 0, and `options` for the rest. Returns the directory.
local function exp1_sweep(options)
  local out = t.tmpdir()
  local argv = {"--out=" .. out, "--profile=paper", "--size=32", "--beta=0.0", table.unpack(options)}
  exp1.run(primitives.parse(exp1, "experiment1", argv), fakes.deps())
  return out
end

-- lr = 0 and a learner, seeds 1 and 2.
local function exp1_runs()
  return exp1_sweep{"--G=4", "--steps=2", "--prompts_per_step=2", "--opt=O3", "--lr=0.0,5e-7", "--seeds=2"}
end

-- A copy of completion c whose code starts with "/* by WHO K */" and a declaration of
-- its own (kernels equal but for comments would share one measurement).
local function tagged(c, who, k)
  local copy = {}
  for key, v in pairs(c) do copy[key] = v end
  copy.text = c.text:gsub("```c\n", "```c\n/* by " .. who .. " " .. k .. " */\nstatic const int by_"
                          .. who .. "_" .. k .. " = 0;\n", 1)
  return copy
end

-- Stand-ins that say who wrote each kernel: each completion is tagged "base" or "learned"
-- with K, its index among its prompt's G, and the policies record every prompt they were
-- asked. The machine has measured rooflines.
local function tagging_deps(machine)
  local deps = fakes.deps()
  deps.asked = {}
  local load = deps.policy.load
  deps.policy.load = function(dir, opts)
    local pol = load(dir, opts)
    local sample = pol.sample
    function pol:sample(texts, o)
      local out = sample(self, texts, o)
      local who = self.skill == 0 and "base" or "learned"
      for p, group in ipairs(out) do
        deps.asked[#deps.asked + 1] = texts[p]
        for k, c in ipairs(group) do group[k] = tagged(c, who, k) end
      end
      return out
    end
    return pol
  end
  deps.bench.machine = function()
    return machine or {cores = 2, peak_gflops = 100.0, measured_peak_gflops = 50.0, measured_bandwidth_gbps = 20.0}
  end
  return deps
end

-- Records every call of evaluate.completions while fn runs: {completions =, ctx =}.
local function recording_evaluate(fn)
  local calls, original = {}, evaluate.completions
  evaluate.completions = function(completions, ctx)
    calls[#calls + 1] = {completions = completions, ctx = ctx}
    return original(completions, ctx)
  end
  local ok, err = pcall(fn)
  evaluate.completions = original
  if not ok then error(err, 0) end
  return calls
end

-- Whether two figures agree to rounding.
local function near(a, b) return type(a) == "number" and math.abs(a - b) < 1e-9 end

-- The kernels of a seed's record, of one part.
local function part_records(rec, part)
  local out = {}
  for _, p in ipairs(rec.prompts) do if p.part == part then out[#out + 1] = p end end
  return out
end

t.test("--prompts=train: the learned policies beat the base model on the training prompts, as before", function()
  local out = exp1_runs()
  local deps = fakes.deps()
  local rows, gains, raw = heldout.compare(out, {G = 0, device = "cpu", prompts = "train"}, deps)
  t.eq(#rows, 2, "one row per learning run")
  local g = gains[KEY]
  t.ok(g, "the learning configuration is named without its seed")
  -- the figures heldout.lua gave before the base and learned kernels were timed together
  t.eq(#g.reward, 2)
  t.ok(near(g.reward[1], 5.0) and near(g.reward[2], 4.6875), table.concat(g.reward, ", "))
  t.ok(near(g.ok[1], 0) and near(g.ok[2], 0))
  t.ok(near(raw.seeds[1].overall.base.reward, -22.0), raw.seeds[1].overall.base.reward)
  t.ok(near(raw.seeds[1].overall.learned.reward, -17.0), raw.seeds[1].overall.learned.reward)
  t.eq(deps.policy.loads, 4, "a base model and a learned one per seed")
  t.contains(rows[1], "| 1 | " .. KEY .. " | 8 |")  -- the eight fixed prompts
  for _, p in ipairs(raw.seeds[1].prompts) do t.eq(p.part, "train") end
  for _, b in ipairs(deps.bench.seen_opts) do t.eq(b.problem.M, 32, "the training size") end
  -- a caller sees each comparison as it finishes (heldout.lua rewrites --out then)
  local seen = {}
  heldout.compare(out, {G = 0, device = "cpu", prompts = "train"}, fakes.deps(), function(r, by_group, x)
    seen[#seen + 1] = {#r, #by_group[KEY].reward, #x.seeds}
  end)
  t.eq(seen, {{1, 1, 1}, {2, 2, 2}}, "one call per finished seed, with what is done so far")
  local only = heldout.compare(out, {G = 0, device = "cpu", seeds = "1", prompts = "train"}, fakes.deps())
  t.eq(#only, 1, "--seeds=1 compares seed 1 alone")
  t.contains(only[1], "| 1 | " .. KEY .. " |")
end)

t.test("--prompts=heldout asks another size, other wordings and the held-out tasks", function()
  local out = exp1_runs()
  local deps = tagging_deps()
  local rows, gains, raw = heldout.compare(out, {G = 0, device = "cpu"}, deps)
  t.eq(#rows, 2)
  t.eq(raw.parts, {"sizes", "wordings", "tasks"})
  t.eq(deps.policy.loads, 4, "the base model's samples are drawn once per seed")
  local rec = raw.seeds[1]
  local held = tasks.list("heldout")
  t.ok(#held >= 3)
  t.eq(#part_records(rec, "sizes"), 8, "as many as the fixed prompts")
  t.eq(#part_records(rec, "wordings"), 8)
  t.eq(#part_records(rec, "tasks"), math.max(8, #held))
  t.eq(#rec.prompts, 24 + math.max(8, #held) - 8)
  t.contains(rows[1], "| 1 | " .. KEY .. " | " .. #rec.prompts .. " |")

  -- other size: 1.5 x 32 = 48, in the prompt and in the benchmark's problem
  t.eq(heldout.heldout_size(32), 48)
  t.eq(heldout.heldout_size(128), 192)
  t.eq(heldout.heldout_size(128, 160), 160)
  for _, p in ipairs(part_records(rec, "sizes")) do t.eq(p.size, "M = N = K = 48") end
  local at = {}
  for _, b in ipairs(deps.bench.batches) do
    local key = b.opts.problem.task or b.opts.problem.M
    at[key] = (at[key] or 0) + 1
  end
  t.eq(at[48], 16, "the sizes part's eight prompts per seed are timed at 48")
  t.eq(at[32], 16, "the wordings part's eight at the training size")

  -- other wordings: every reworded prompt was asked, and no training prompt
  local task = wiring.task({task = "matmul", size = 32, threads = 0, isa = "auto"}, {opt = "O3"})
  local asked = {}
  for _, text in ipairs(deps.asked) do asked[text] = true end
  local reworded, fixed = prompts.reworded(task), prompts.fixed(task)
  t.eq(#reworded, #fixed)
  for i, m in ipairs(reworded) do
    t.ok(asked[prompts.render(m)], "reworded prompt " .. i .. " was asked")
    t.ok(m[2].content ~= fixed[i][2].content)
  end
  for i, m in ipairs(fixed) do t.ok(not asked[prompts.render(m)], "training prompt " .. i .. " was asked") end
  local task48 = wiring.task({task = "matmul", size = 48, threads = 0, isa = "auto"}, {opt = "O3"})
  t.ok(asked[prompts.render(prompts.fixed(task48)[1])], "the fixed wording at the held-out size")

  -- held-out tasks: each at its test size, judged as its own task
  local names = {}
  for _, p in ipairs(part_records(rec, "tasks")) do
    names[p.task] = true
    t.eq(p.size, "test")
  end
  for _, h in ipairs(held) do t.ok(names[h.name], h.name .. " is asked") end

  t.ok(gains[KEY].reward[1] > 0 and gains[KEY].reward[2] > 0, "the learner gains in each seed")
  for _, part in ipairs({"sizes", "wordings", "tasks"}) do
    t.eq(#gains[KEY].parts[part].reward, 2, part .. " has a gain per seed")
  end
end)

t.test("runs made with --prefill are held out with the answer begun the same way", function()
  local out = exp1_sweep{"--G=4", "--steps=1", "--prompts_per_step=2", "--opt=O3", "--lr=0.0,5e-7", "--prefill"}
  local deps = tagging_deps()
  local calls = recording_evaluate(function() heldout.compare(out, {G = 0, device = "cpu", seeds = "1"}, deps) end)
  t.ok(#calls > 0)
  for _, c in ipairs(calls) do
    local begun = prompts.answer_start(c.ctx.bench_opts.problem.task)
    for _, text in ipairs(c.completions) do t.eq(text:sub(1, #begun), begun) end
  end
  for _, asked in ipairs(deps.asked) do
    t.ok(asked:match("%) {\n$"), "every prompt ends with a prototype line: " .. asked:sub(-80))
  end
end)

t.test("both policies' kernels of a prompt are timed in one batch, taking turns", function()
  local out = exp1_runs()
  local deps = tagging_deps()
  local calls = recording_evaluate(function() heldout.compare(out, {G = 0, device = "cpu", seeds = "1"}, deps) end)
  local by_task = {}
  for _, c in ipairs(calls) do
    local problem = c.ctx.bench_opts.problem
    if problem.task then
      by_task[problem.task] = problem.size
      t.eq(c.ctx.task, problem.task, "a held-out task's kernels are extracted as its own")
    end
    t.eq(#c.completions, 8, "one call per prompt: the base model's 4 and the learner's 4")
    for j, comp in ipairs(c.completions) do
      t.eq(comp.skill == 0, j % 2 == 1, "completion " .. j .. " is " .. (j % 2 == 1 and "base" or "learned"))
    end
  end
  for _, h in ipairs(tasks.list("heldout")) do t.eq(by_task[h.name], "test", h.name) end
  -- in the benchmark: both policies in each batch, in the order base 1, learned 1, base 2, ...
  t.ok(#deps.bench.batches >= 16)
  for b, batch in ipairs(deps.bench.batches) do
    local last, who = 0, {}
    for _, src in ipairs(batch.sources) do
      local policy, k = src:match("/%* by (%a+) (%d+) %*/")
      t.ok(policy, "batch " .. b .. " holds an untagged kernel")
      local position = 2 * tonumber(k) - (policy == "base" and 1 or 0)
      t.ok(position > last, "batch " .. b .. " is out of turn")
      last, who[policy] = position, true
    end
    t.ok(who.base and who.learned, "batch " .. b .. " times both policies")
  end
end)

t.test("the base model samples once per seed, and its kernels are timed again beside each learner's", function()
  local out = exp1_sweep{"--G=2", "--steps=1", "--prompts_per_step=1", "--opt=O3", "--lr=0.0,5e-7,1e-6"}
  local deps = tagging_deps()
  local _, gains, raw = heldout.compare(out, {G = 0, device = "cpu", heldout_tasks = "none"}, deps)
  t.ok(gains["beta=0,lr=5e-07,opt=O3"] and gains["beta=0,lr=1e-06,opt=O3"], "both learners compared")
  t.eq(deps.policy.loads, 3, "one base model for both learners")
  t.eq(#raw.seeds, 2)
  t.eq(#deps.bench.batches, 2 * 16, "each learner's 16 prompts timed, each batch with the base model's kernels")
  for b, batch in ipairs(deps.bench.batches) do
    t.ok(batch.sources[1]:find("/* by base 1 */", 1, true), "batch " .. b .. " starts with the base model's")
  end
  for i, p in ipairs(raw.seeds[1].prompts) do  -- the same base completions, judged twice
    for j, k in ipairs(p.kernels) do
      if k.policy == "base" then t.eq(k.status, raw.seeds[2].prompts[i].kernels[j].status) end
    end
  end
end)

t.test("the roofline score is each kernel's share of its roofline, 0 for a failure", function()
  local out = exp1_runs()
  local deps = tagging_deps()
  local _, gains, raw = heldout.compare(out, {G = 0, device = "cpu", heldout_tasks = "none"}, deps)
  t.eq(raw.parts, {"sizes", "wordings"})
  local ok, failed = 0, 0
  for _, rec in ipairs(raw.seeds) do
    for _, p in ipairs(rec.prompts) do
      t.eq(p.roofline_limit, 50.0, "the measured peak of all cores")
      for _, k in ipairs(p.kernels) do
        if k.status == "ok" then
          ok = ok + 1
          t.ok(near(k.roofline, 100 * k.speed / 50.0), k.roofline)
        else
          failed = failed + 1
          t.eq(k.roofline, 0)
          t.eq(k.speed, nil)
        end
      end
    end
    for _, part in ipairs({"sizes", "wordings"}) do  -- the figure is the kernels' mean
      local sum, n = 0, 0
      for _, p in ipairs(part_records(rec, part)) do
        for _, k in ipairs(p.kernels) do
          if k.policy == "learned" then sum, n = sum + k.roofline, n + 1 end
        end
      end
      t.ok(near(rec.parts[part].learned.roofline, sum / n), part)
    end
    local parts = rec.parts
    t.ok(near(rec.overall.base.roofline, (parts.sizes.base.roofline + parts.wordings.base.roofline) / 2))
  end
  t.ok(ok > 0 and failed > 0, ok .. " ok, " .. failed .. " failed")
  for i = 1, 2 do t.ok(gains[KEY].roofline[i] > 0, "seed " .. i .. " roofline gain") end
  -- a memory-bound task's roofline is the bandwidth; compute-bound, the peak of the threads used
  local m = {cores = 4, measured_peak_gflops = 80.0, measured_bandwidth_gbps = 20.0}
  t.eq(heldout.roofline_limit(m, "conv1d", 0), 20.0)
  t.eq(heldout.roofline_limit(m, "matmul", 1), 20.0)
  t.eq(heldout.roofline_limit(m, "cholesky", 0), 80.0)
  t.eq(heldout.roofline_score({status = "ok", gflops = 10.0}, 40.0), 25.0)
  t.eq(heldout.roofline_score({status = "ok", gflops = 1.0, speed = 5.0, unit = "GB/s"}, 20.0), 25.0)
  t.eq(heldout.roofline_score({status = "compile_error"}, 40.0), 0)
  t.eq(heldout.roofline_score({status = "ok", gflops = 10.0}, nil), nil)
  -- a machine without measurements: no roofline score, and the table says so
  local rows2, gains2, raw2 = heldout.compare(out, {G = 0, device = "cpu", heldout_tasks = "none", seeds = "1"},
                                              tagging_deps({cores = 2, peak_gflops = 100.0}))
  t.eq(raw2.seeds[1].overall.base.roofline, nil)
  t.eq(#gains2[KEY].roofline, 0)
  t.contains(rows2[1], "% → ") -- the verified share is still shown
  t.contains(rows2[1], ", - → -")
end)

t.test("--out holds every kernel, who wrote it and the figures per part", function()
  local out = exp1_runs()
  local file = out .. "/heldout.json"
  heldout.main({[0] = "heldout.lua", out, "--out=" .. file, "--heldout_tasks=conv1d,fft"}, tagging_deps())
  local doc = json.read(file)
  t.eq(doc.complete, true)
  t.eq(doc.prompts, "heldout")
  t.eq(#doc.seeds, 2)
  t.eq(doc.machine.measured_peak_gflops, 50.0)
  local kinds, names = {}, {}
  for _, p in ipairs(doc.seeds[1].prompts) do
    t.ok(p.part and p.task and p.size and p.sample_seed, "a prompt says its part, task, size and seed")
    if p.part == "tasks" then names[p.task] = true end
    t.eq(#p.kernels, 8)
    for j, k in ipairs(p.kernels) do
      t.eq(k.policy, j % 2 == 1 and "base" or "learned")
      t.eq(k.sample, (j + 1) // 2)
      t.ok(type(k.status) == "string" and type(k.reward) == "number" and type(k.roofline) == "number")
      if k.status == "ok" then t.ok(k.speed > 0 and k.unit == "GFLOPS") end
      kinds[k.status] = true
    end
  end
  t.eq(names, {conv1d = true, fft = true}, "--heldout_tasks names them")
  t.ok(kinds.ok and kinds.format_violation)
  local g = doc.gains[KEY]
  t.eq(#g.overall.roofline.values, 2)
  t.ok(g.overall.reward.interval.mean > 0)
  t.contains(g.parts.wordings.reward.tests, "sign test")
  t.ok(g.parts.sizes and g.parts.tasks)
  t.eq(#doc.rows, 2)
  t.raises(function() heldout.compare(out, {G = 0, device = "cpu", heldout_tasks = "axpy"}, fakes.deps()) end,
           "not a held-out task")
end)

t.test("each learning configuration is compared with the lr = 0 run of its own swept values", function()
  local out = exp1_sweep{"--G=2", "--steps=1", "--prompts_per_step=1", "--opt=O0,O3", "--lr=0.0,5e-7"}
  local deps = fakes.deps()
  local rows, gains = heldout.compare(out, {G = 0, device = "cpu"}, deps)
  t.eq(#rows, 2)
  t.ok(gains["beta=0,lr=5e-07,opt=O0"] and gains["beta=0,lr=5e-07,opt=O3"], "both levels compared")
  t.eq(deps.policy.loads, 4, "an O0 and an O3 baseline, each with its learner")
  local levels = {}
  for _, b in ipairs(deps.bench.seen_opts) do levels[b.opt] = true end
  t.eq(levels, {O0 = true, O3 = true}, "each side judged at its own level")
end)

t.test("SQD's runs: the lr = 0 run's next plan with --prompts=train, the held-out parts by default", function()
  local out = t.tmpdir()
  exp2.run(primitives.parse(exp2, "experiment2", {"--out=" .. out, "--iterations=2", "--profile=paper",
                                                  "--G=4", "--size=32", "--pool_size=2", "--opt=O3",
                                                  "--lr=0.0,5e-7", "--seeds=2"}), fakes.deps())
  local rows, gains, raw = heldout.compare(out, {G = 2, device = "cpu", prompts = "train"}, fakes.deps())
  t.eq(#rows, 2)
  local g = gains["lr=5e-07,opt=O3"].reward
  t.ok(#g == 2 and near(g[1], 0) and near(g[2], 0), "as before the kernels were timed together")
  t.ok(near(raw.seeds[1].overall.base.reward, 30.0), raw.seeds[1].overall.base.reward)
  t.ok(near(raw.seeds[2].overall.base.reward, 8.0), raw.seeds[2].overall.base.reward)
  -- the plan over pools of stages 1 and 2 (2 kernels each) and the seed: more than one prompt
  local prompts_asked = tonumber(rows[1]:match("^| 1 | [^|]+ | (%d+) |"))
  t.ok(prompts_asked and prompts_asked > 1, rows[1])
  t.ok(raw.seeds[1].prompts[1].stage, "SQD's prompts keep their stage")
  local _, _, held = heldout.compare(out, {G = 2, device = "cpu", heldout_tasks = "fft"}, fakes.deps())
  local parts = {}
  for _, p in ipairs(held.seeds[1].prompts) do
    parts[p.part] = (parts[p.part] or 0) + 1
    t.eq(p.stage, nil, "held-out prompts have no stage rules")
  end
  t.eq(parts, {sizes = 8, wordings = 8, tasks = 8})
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
