-- Both experiments end to end for a few steps: the run store's contents, resuming after
-- a SIGKILL in the middle of a step, and the report. The primitives are the stand-ins
-- of fakes.lua unless primitives.lua says otherwise.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local primitives = require "primitives"
local reward = require "method.reward"
local sqd = require "method.sqd"
local prompts = require "method.prompts"
local stages = require "method.stages"

-- The machine's vector ISA (avx512 natively here, avx2 under ENGINE_TARGET=x86-64-v3):
-- --isa=auto, the default, asks for it.
local simd = bench.machine().simd

local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")

local valid_status = {}
for _, s in ipairs(reward.statuses) do valid_status[s] = true end

local parse = primitives.parse

-- Runs an experiment in a child engine; returns how it ended.
local function child(name, options, kill_at)
  local cmd = {string.format("KILL_AT_BATCH=%s", kill_at or ""), string.format("%q", engine_exe),
               string.format("%q", here .. "/run_experiment.lua"), name}
  for _, o in ipairs(options) do cmd[#cmd + 1] = string.format("%q", o) end
  local ok, how, code = os.execute(table.concat(cmd, " ") .. " >/dev/null 2>&1")
  return ok, how, code
end

local function killed(how, code)
  return (how == "signal" and code == 9) or (how == "exit" and code == 128 + 9)
end

-- Everything a run stored about its samples, in id order, for comparing two runs.
-- Measured figures are compared only with the fakes (a real benchmark's vary).
local function contents(dir)
  local run = store.open(dir, {log_file = false})
  local rows = {}
  for _, s in ipairs(run:samples{}) do
    rows[#rows + 1] = {s.id, s.parent_id or 0, s.iteration, s.stage or 0, s.code,
                       primitives.fake and s.status or "", primitives.fake and s.gflops or 0,
                       primitives.fake and s.reward or 0}
  end
  local metrics = {}
  for _, m in ipairs(run:metrics()) do
    metrics[#metrics + 1] = {m.kind, m.step or 0, m.iteration or 0, m.group or 0, m.kernels,
                             primitives.fake and m.mean_reward or 0}
  end
  run:close()
  return rows, metrics
end

-- Runs an experiment in-process in a fresh directory with `options` besides --out;
-- returns its summaries, the deps it ran with and the directory.
local function run_fresh(exp, name, options)
  local out, deps = t.tmpdir(), primitives.deps()
  local summaries = exp.run(parse(exp, name, {"--out=" .. out, table.unpack(options)}), deps)
  return summaries, deps, out
end

local E1 = {"--profile=paper", "--G=4", "--prompts_per_step=2", "--size=64", "--opt=O3",
            "--lr=5e-7", "--beta=0.0,0.01"}

t.test("experiment 1: two steps fill the run store", function()
  local summaries, deps, out = run_fresh(exp1, "experiment1", {"--steps=2", table.unpack(E1)})
  t.eq(#summaries, 2)
  t.eq(summaries[1].name, "beta=0,lr=5e-07,opt=O3")
  local refs = {}
  for _, s in ipairs(summaries) do
    local run = store.open(s.dir, {log_file = false})
    t.eq(run:get("step"), 2)
    t.eq(run:count(), 2 * 2 * 4, "steps x prompts x G samples")
    for step = 1, 2 do t.eq(run:count{iteration = step}, 8) end
    for _, sample in ipairs(run:samples{}) do
      t.ok(valid_status[sample.status], "status " .. sample.status)
      t.eq(sample.config_id, s.name)
      if sample.status == "ok" then t.eq(sample.reward, sample.gflops)
      else t.eq(sample.reward, reward.penalties[sample.status]) end
    end
    -- a group's prompt is stored with its first sample
    local first = run:samples{iteration = 1, limit = 1}[1]
    t.contains(first.prompt, "matmul_optimized")
    t.contains(first.prompt, "<|im_start|>assistant")
    local metrics = run:metrics()
    t.eq(#metrics, 2)
    for i, m in ipairs(metrics) do
      t.eq(m.kind, "step")
      t.eq(m.step, i)
      t.eq(m.kernels, 8)
      t.ok(m.seconds.sample >= 0 and m.seconds.evaluate >= 0 and m.seconds.update >= 0)
      local n = 0
      for status, c in pairs(m.counts) do
        t.ok(valid_status[status]); n = n + c
      end
      t.eq(n, 8)
      t.ok(type(m.kl) == "number", "KL is recorded")
    end
    t.eq(run:get("updates"), 2)
    t.eq(run:checkpoints(), {"update-1", "update-2"})
    t.eq(run:config().config.lr, 5e-7)
    -- the ISA the prompts named is part of the run's identity: the machine's
    t.eq(run:config().isa, simd)
    t.contains(first.prompt, stages.name("simd", simd):gsub(" SIMD intrinsics", ""))
    -- OpenBLAS on the run's problem, measured when the run started
    local ref = run:get("reference")
    t.ok(ref.gflops > 0 and ref.best >= ref.median * 0.999 and ref.threads >= 1, ref)
    -- measured once for the sweep: every run divides by the first run's measurement
    t.eq(ref.shared, "yardsticks.json")
    t.eq(ref.measured_by, summaries[1].name)
    refs[#refs + 1] = ref
    -- the node's timing noise, measured when the run started (the stand-in bench
    -- evaluates no single kernel, so only the engine's records it)
    local control = run:get("control")
    if primitives.fake then
      t.eq(control, nil)
    else
      t.ok(type(control) == "table" and control.n == 5 and control.median > 0 and control.cov >= 0, control)
    end
    run:close()
  end
  t.eq(refs[2], refs[1], "both runs hold the one measurement")
  if primitives.fake then
    t.eq(#deps.train.trainers, 2)
    for _, trainer in ipairs(deps.train.trainers) do
      t.eq(trainer.updates, 2)
      t.eq(#trainer.groups, 4, "one update per step over the step's two groups")
    end
    t.eq(deps.train.trainers[2].opts.beta, 0.01)
    local o = deps.bench.seen_opts[1]
    t.eq(o.opt, "O3")
    t.eq(o.problem, {M = 64, N = 64, K = 64, c_init = "nan"})
    t.eq({o.timeout, o.warmup, o.runs, o.max_runs, o.cov_target}, {8.0, 1, 3, 10, 0.05})
    t.eq(deps.bench.references, 1, "once per sweep")
    -- a resumed run keeps the figure it started with, and so does a run new to the sweep
    exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=3", "--resume", table.unpack(E1)}), deps)
    t.eq(deps.bench.references, 1)
    local seeded = parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--resume", "--seeds=2",
                                               table.unpack(E1)})
    exp1.run(seeded, deps)
    t.eq(deps.bench.references, 1, "the sweep's yardstick serves the runs added to it")
    -- a damaged yardsticks file is named, not silently measured again
    local f = assert(io.open(out .. "/yardsticks.json", "w")); f:write("{not json"); f:close()
    t.raises(function() exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--resume", "--seeds=3",
                                                              table.unpack(E1)}), deps) end,
             "yardsticks.json")
  end
end)

t.test("experiment 1 with the KernelCompare reward beats the naive kernel's GFLOPS", function()
  local summaries = run_fresh(exp1, "experiment1", {"--steps=1", "--reward=kernelcompare", table.unpack(E1)})
  local run = store.open(summaries[1].dir, {log_file = false})
  local baseline = run:get("baseline_gflops")
  t.ok(type(baseline) == "number", "the naive kernel was measured")
  local allowed = {[0] = true, [0.4] = true, [0.8] = true, [1.0] = true}
  for _, s in ipairs(run:samples{}) do
    t.ok(allowed[s.reward], "reward " .. s.reward)
    if s.status == "ok" then t.eq(s.reward, s.gflops > baseline and 1.0 or 0.8) end
  end
  run:close()
end)

t.test("experiment 1 refuses to overwrite a run without --resume", function()
  local out = t.tmpdir()
  local base = {"--out=" .. out, "--steps=1", table.unpack(E1)}
  exp1.run(parse(exp1, "experiment1", base), primitives.deps())
  t.raises(function() exp1.run(parse(exp1, "experiment1", base), primitives.deps()) end,
           "pass --resume")
end)

-- The kill tests stop the child at its Nth bench call, which the stand-ins make happen
-- at known points; a random model's completions are format violations that never reach
-- the bench, so these run with the stand-ins only (resuming is the same code either way).
local kill_test = primitives.fake and t.test or function() end

-- Runs `name` with `options` twice: once through, and once killed at its kill_at-th bench
-- call, whose run `config` (its directory under the sweep) `check_killed(run)` looks at
-- before it is resumed. The resumed run must store exactly what the uninterrupted one did;
-- returns its directory and rows.
local function killed_and_resumed(name, options, kill_at, config, check_killed)
  local clean, broken = t.tmpdir(), t.tmpdir()
  t.ok(child(name, {"--out=" .. clean, table.unpack(options)}))
  local ok, how, code = child(name, {"--out=" .. broken, table.unpack(options)}, kill_at)
  t.ok(not ok and killed(how, code), "the first run was killed")
  local run = store.open(broken .. config, {log_file = false})
  check_killed(run)
  run:close()
  t.ok(child(name, {"--out=" .. broken, "--resume", table.unpack(options)}))
  local rows_a, metrics_a = contents(clean .. config)
  local rows_b, metrics_b = contents(broken .. config)
  t.eq(rows_b, rows_a, "the resumed run stored exactly what an uninterrupted one did")
  t.eq(metrics_b, metrics_a)
  return broken .. config, rows_b
end

kill_test("experiment 1: a run killed mid-step resumes without losing or repeating a step", function()
  local options = {"--steps=3", "--configs=beta=0", table.unpack(E1)}
  -- two bench calls per step: the 4th is step 2's second group
  local dir, rows = killed_and_resumed("experiment1", options, 4, "/beta=0,lr=5e-07,opt=O3", function(run)
    t.eq(run:get("step"), 1)
    t.eq(run:count(), 8, "only step 1 was committed")
  end)
  t.eq(#rows, 3 * 2 * 4)
  if primitives.fake then
    local run2 = store.open(dir, {log_file = false})
    t.eq(json.read(run2:checkpoint_path("update-3") .. "/trainer.json").updates, 3,
         "the trainer resumed from its checkpoint")
    run2:close()
  end
end)

local E2 = {"--profile=paper", "--G=8", "--size=64", "--pool_size=3", "--opt=O3", "--lr=0.0,5e-7"}

t.test("experiment 2: two SQD iterations with lineage in the run store", function()
  local summaries, deps = run_fresh(exp2, "experiment2", {"--iterations=2", table.unpack(E2)})
  t.eq(#summaries, 2)
  t.eq(summaries[1].name, "lr=0,opt=O3")
  for _, s in ipairs(summaries) do
    local run = store.open(s.dir, {log_file = false})
    t.eq(run:get("iteration"), 2)
    local seed = run:sample(run:get("seed_id"))
    t.eq(seed.iteration, 0)
    t.eq(seed.extra.action, "seed")
    -- iteration 1: the pools are empty, so only the seed is expanded (G children, stage 1)
    local first = run:samples{iteration = 1}
    t.eq(#first, 8)
    for _, c in ipairs(first) do
      t.eq(c.parent_id, seed.id)
      t.eq(c.stage, 1)
    end
    -- iteration 2 expands what SQD selects from iteration 1's children, plus the seed
    local nodes = {}
    for i, c in ipairs(first) do nodes[i] = sqd.node(c) end
    local pools = sqd.file(nodes, {pool_size = 3, rng = sqd.rng(1 * 104729 + 1)})
    local plan = sqd.plan(pools, sqd.node(seed), {rng = sqd.rng(1 * 7919 + 2)})
    local second = run:samples{iteration = 2}
    t.eq(#second, #plan * 8)
    local groups = {}
    for _, m in ipairs(run:metrics()) do
      if m.kind == "group" and m.iteration == 2 then groups[#groups + 1] = m end
    end
    t.eq(#groups, #plan)
    local actions = {}
    for g, pick in ipairs(plan) do
      actions[pick.action] = (actions[pick.action] or 0) + 1
      t.eq({groups[g].parent, groups[g].action, groups[g].stage},
           {pick.node.id, pick.action, pick.stage}, "group " .. g)
    end
    if primitives.fake then
      -- 8 children, 4 ok: the pool keeps 2 ok + 1 failed; 40% of 2 ok -> 1 deepened,
      -- 30% -> 1 improved, 30% of 1 failed -> 1 repaired, and the seed is improved
      t.eq(actions, {deepen = 1, improve = 2, repair = 1})
    end
    for _, c in ipairs(second) do
      local parent = run:sample(c.parent_id)
      t.ok(parent.iteration == 1 or parent.id == seed.id, "parent from the previous pool")
      local chain = run:lineage(c.id)
      t.eq(chain[1].id, seed.id, "every lineage starts at the seed")
      t.eq(chain[#chain].id, c.id)
    end
    -- deepened children are asked for the next stage, and checked against its rules
    for _, c in ipairs(second) do
      if c.extra.action == "deepen" then t.eq(c.stage, run:sample(c.parent_id).stage + 1) end
      if c.status == "format_violation" and c.extra.reason == "stage" then
        t.contains(c.extra.message, "stage " .. c.stage .. " forbids")
      end
    end
    local its = {}
    for _, m in ipairs(run:metrics()) do if m.kind == "iteration" then its[#its + 1] = m end end
    t.eq(#its, 2)
    t.eq(#its[2].pool, 6)
    t.eq(run:get("updates", 0), s.config.lr > 0 and (1 + #plan) or 0)
    run:close()
  end
  if primitives.fake then
    t.eq(#deps.train.trainers, 1, "lr = 0 builds no trainer")
  end
end)

kill_test("experiment 2: a run killed mid-iteration resumes exactly", function()
  local options = {"--iterations=3", "--configs=lr=5e-7", table.unpack(E2)}
  -- bench calls: the seed (1), iteration 1's group (2) and the re-measurement of its best
  -- kernel (3), then iteration 2's groups, two calls each: killed in the second group
  killed_and_resumed("experiment2", options, 6, "/lr=5e-07,opt=O3", function(run)
    t.eq(run:get("iteration"), 1)
    t.eq(run:get("group"), 1, "one group of iteration 2 was committed")
  end)
end)

-- The groups of each iteration, from a run's metrics; and the updates it recorded.
local function groups_and_updates(dir)
  local run = store.open(dir, {log_file = false})
  local per_iteration, updates_logged = {}, 0
  for _, m in ipairs(run:metrics()) do
    if m.kind == "group" then
      per_iteration[m.iteration] = (per_iteration[m.iteration] or 0) + 1
      if m.loss then updates_logged = updates_logged + 1 end
    end
  end
  local updates = run:get("updates", 0)
  run:close()
  return per_iteration, updates, updates_logged
end

t.test("experiment 2 --update_groups=3: an update sees three groups, an iteration's last the rest", function()
  local summaries, deps = run_fresh(exp2, "experiment2", {"--iterations=3", "--update_groups=3", "--configs=lr=5e-7",
                                                          table.unpack(E2)})
  local s = summaries[1]
  t.eq(s.iterations, 3)
  local per_iteration, updates, logged = groups_and_updates(s.dir)
  local groups, expected = 0, 0
  for _, n in pairs(per_iteration) do
    groups, expected = groups + n, expected + (n + 2) // 3  -- batches never span iterations
  end
  t.ok(expected < groups, "some update saw several groups: " .. expected .. " of " .. groups)
  t.eq(updates, expected)
  t.eq(logged, expected, "each update's figures are logged once, with its batch's last group")
  if primitives.fake then
    local trainer = deps.train.trainers[1]
    t.eq(trainer.updates, expected)
    t.eq(#trainer.groups, groups, "every group trained on once")
  end
end)

kill_test("experiment 2 --update_groups=3: a run killed inside a batch resumes at the batch's first group", function()
  local options = {"--iterations=3", "--update_groups=3", "--configs=lr=5e-7", table.unpack(E2)}
  -- bench calls: the seed (1), iteration 1's group and its re-measurement (2, 3), then two
  -- a group: killed in iteration 2's second group, before its batch's update
  killed_and_resumed("experiment2", options, 7, "/lr=5e-07,opt=O3", function(run)
    t.eq(run:get("iteration"), 1)
    t.eq(run:get("group", 0), 0, "no group of the unfinished batch was committed")
    t.eq(run:get("updates"), 1)
    t.eq(run:count{iteration = 2}, 0)
  end)
end)

t.test("--isa forces the ISA the prompts name, and the run records it", function()
  for _, isa in ipairs{"avx2", "avx512"} do
    local summaries, _, out = run_fresh(exp1, "experiment1", {"--steps=1", "--isa=" .. isa, "--configs=1",
                                                              table.unpack(E1)})
    local summary = summaries[1]
    local run = store.open(summary.dir, {log_file = false})
    t.eq(run:config().isa, isa)
    local first = run:samples{iteration = 1, limit = 1}[1]
    -- the first fixed prompt of the task, exactly (with avx512: the paper's)
    local task = {M = 64, N = 64, K = 64, opt = "O3", isa = isa}
    t.eq(first.prompt, prompts.render(prompts.fixed(task)[1]))
    if isa == "avx2" then
      t.contains(first.prompt, "AVX2/FMA")
      t.ok(not first.prompt:find("AVX-512 SIMD"), "no AVX-512 asked for")
    else
      t.ok(not first.prompt:find("AVX2"), "the paper's prompt")
    end
    run:close()
    -- a resume on another ISA is another run: refused
    local other = parse(exp1, "experiment1", {"--out=" .. out, "--steps=2", "--resume", "--configs=1",
                                              "--isa=" .. (isa == "avx2" and "avx512" or "avx2"),
                                              table.unpack(E1)})
    t.raises(function() exp1.run(other, primitives.deps()) end, "isa")
  end
  local _, err = require("engine.args").try_parse({[0] = "experiment1.lua", "--isa=neon"}, exp1.spec)
  t.contains(tostring(err), "neon")
end)

t.test("the report: plots, tables, the best kernel and its lineage", function()
  local out1, out2 = t.tmpdir(), t.tmpdir()
  t.ok(child("experiment1", {"--out=" .. out1, "--steps=2", "--profile=paper", "--G=4",
                             "--prompts_per_step=2", "--size=64", "--opt=O3", "--lr=0.0,5e-7",
                             "--beta=0.0"}))
  t.ok(child("experiment2", {"--out=" .. out2, "--iterations=2", table.unpack(E2)}))
  for _, out in ipairs{out1, out2} do
    local ok = os.execute(string.format("%q report.lua %q >/dev/null 2>&1", engine_exe, out))
    t.ok(ok, "report.lua ran on " .. out)
    local md = assert(io.open(out .. "/report/report.md")):read("a")
    t.contains(md, "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain |")
    t.contains(md, "| configuration | techniques of the best kernel |")
    -- the SIMD column and the header follow the ISA the runs asked for
    t.contains(md, "| " .. stages.name("simd", simd) .. " |")
    t.contains(md, "Vector ISA the prompts asked for: " .. stages.isa(simd).name)
    if not primitives.fake then  -- the stand-in bench reports no target
      t.contains(md, "vector ISA " .. stages.isa(simd).name .. ", target " .. bench.machine().target)
    end
    t.contains(md, "## Lineage of the best kernel")
    -- every configuration's best against OpenBLAS, measured when its run started
    t.contains(md, "the fastest library on the same problem")
    local table2 = md:match("| configuration | best GFLOPS.-\n\n")
    for row in table2:gmatch("\n(| [^\n]+)") do
      local cells = {}
      for cell in row:sub(2):gmatch("([^|]*)|") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$") end
      if cells[2]:match("^%d") then t.ok(cells[4]:match("^%d+%.%d%dx$"), "a ratio to OpenBLAS: " .. row) end
    end
    -- the figures need gnuplot (test_figures.lua checks the report without it)
    for _, png in ipairs(require("report.figures").available() and {"reward.png", "gflops.png"} or {}) do
      local f = assert(io.open(out .. "/report/" .. png, "rb"), png .. " was written")
      local bytes = f:read("a")
      f:close()
      t.eq(bytes:sub(1, 8), "\137PNG\r\n\26\n", png .. " is a PNG")
      t.ok(#bytes > 2000, png .. " has content")
    end
  end
  -- experiment 2's seed (the naive kernel) always succeeds: its report has a best kernel
  t.contains(io.open(out2 .. "/report/report.md"):read("a"), "matmul_optimized")
  t.ok(io.open(out2 .. "/report/best_kernel.c"), "the best kernel's source")
  local md1 = io.open(out1 .. "/report/report.md"):read("a")
  local base_row = md1:match("| beta=0,lr=0,opt=O3 |[^\n]*")
  t.ok(base_row and base_row:find("(baseline)", 1, true), "the lr = 0 baseline row")
  local gain_row = md1:match("| beta=0,lr=5e%-07,opt=O3 |[^\n]*")
  t.ok(gain_row and gain_row:match("| [%+%-]%d+%.%d%d |"), "a reward gain against lr = 0: "
       .. tostring(gain_row))
  if primitives.fake then
    -- the fakes' kernels succeed, and the fake policy improves with every update
    t.contains(base_row, "| 41.00 (first 41.00) | 41.0% |", "fake GFLOPS over the fake peak")
    t.ok(gain_row:find("x (", 1, true), "a learning gain in GFLOPS: " .. gain_row)
    t.ok(gain_row:match("| %+%d+%.%d%d |"), "a positive reward gain: " .. gain_row)
    t.contains(md1, "matmul_optimized")
    t.ok(io.open(out1 .. "/report/best_kernel.c"), "the best kernel's source")
  end
  local md2 = io.open(out2 .. "/report/report.md"):read("a")
  t.contains(md2, "lr=5e-07,opt=O3")
  t.contains(md2, "| seed |")
  t.contains(md2, "| lr=5e-07,opt=O3 | 2 |")
  -- any kernel's lineage, printed from a configuration's directory
  local config_dir = out2 .. "/lr=5e-07,opt=O3"
  local run = store.open(config_dir, {log_file = false})
  local child_id = run:samples{iteration = 2, limit = 1}[1].id
  run:close()
  local pipe = io.popen(string.format("%q report.lua %q --lineage=%d 2>&1", engine_exe, config_dir, child_id))
  local text = pipe:read("a")
  t.ok(pipe:close(), text)
  t.contains(text, "| seed | 1 | 0 | 1 |")
  t.contains(text, string.format("--- sample %d (", child_id))
  t.ok(not os.execute(string.format("%q report.lua %q --lineage=99999 2>/dev/null", engine_exe, config_dir)),
       "an unknown sample is an error")
end)

t.run()
