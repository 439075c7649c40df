-- Both experiments on a task of the suite (--task): the prompts are the task's, the
-- kernels are extracted by its signature, judged under its stage ladder and measured by
-- the real benchmark on its problem. The policy is a stand-in that answers with the
-- task's test kernels (tests/bench/tasks/axpy.lua): plain, off by one, single precision.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local stages = require "method.stages"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local kernels = dofile(here .. "/../bench/tasks/axpy.lua")

local function fenced(code) return "Here it is:\n```c\n" .. code .. "```\n" end

-- A policy whose completions cycle through the three test kernels, recording its prompts.
local function task_policy(seen)
  return fakes.answering_policy({fenced(kernels.plain), fenced(kernels.off_by_one), fenced(kernels.single)}, seen)
end

local function parse(exp, name, extra)
  local argv = {[0] = name .. ".lua", "--model=fake-model", "--task=axpy", "--task_size=test",
                "--threads=1", "--runs=1", "--max_runs=1", "--warmup=0", "--opt=O2"}
  for _, o in ipairs(extra) do argv[#argv + 1] = o end
  return require("run.options").parse(argv, exp.spec)
end

t.test("experiment 1 on a task of the suite: its prompts, its kernels, measured on its problem", function()
  local out, seen = t.tmpdir(), {}
  local opts = parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--G=3", "--prompts_per_step=1",
                                           "--lr=5e-7", "--beta=0", "--profile=paper"})
  local deps = {policy = task_policy(seen), bench = bench, train = fakes.train()}
  local summaries = exp1.run(opts, deps)
  t.eq(#summaries, 1)
  t.contains(seen[1], bench.task("axpy").prototype)
  t.ok(not seen[1]:find("matmul_optimized"), "no word of matmul in the prompt")
  local run = store.open(summaries[1].dir, {log_file = false})
  local statuses = {}
  for _, s in ipairs(run:samples{}) do statuses[#statuses + 1] = s.status end
  t.eq(statuses, {"ok", "verification_error", "verification_error"})
  local ok = run:samples{}[1]
  t.ok(ok.gflops > 0, "the plain kernel was measured")
  -- axpy is memory-bound: its reward is its GB/s, 12 bytes for every FLOP
  t.eq(bench.task("axpy").roofline, "memory")
  t.near(ok.reward, ok.gflops * 12, ok.gflops * 12 * 1e-9)
  local ref = run:get("reference")
  t.ok(ref and ref.gflops > 0 and ref.library ~= nil, "the task's yardstick was measured")
  run:close()
end)

t.test("experiment 2 on a task of the suite climbs the task's own ladder", function()
  local out, seen = t.tmpdir(), {}
  local opts = parse(exp2, "experiment2", {"--out=" .. out, "--iterations=1", "--G=3", "--lr=0",
                                           "--profile=paper"})
  local deps = {policy = task_policy(seen), bench = bench, train = fakes.train()}
  local summaries = exp2.run(opts, deps)
  local run = store.open(summaries[1].dir, {log_file = false})
  local seed = run:sample(run:get("seed_id"))
  t.eq(seed.status, "ok", "the spec's reference is the seed and verifies")
  t.eq(seed.code, bench.task("axpy").reference)
  local ladder = stages.for_task("axpy")
  t.eq(#run:get("pool"), ladder.count, "one pool per stage of the task's ladder")
  t.contains(seen[1], "Stage 1 of " .. ladder.count)
  run:close()
end)

-- A policy for a mixture: each prompt answered with its task's plain test kernel; `seen`
-- gets the task of each prompt.
local function mixture_policy(seen)
  return fakes.answering_policy(function(prompt)
    local answer
    for _, name in ipairs{"axpy", "dot", "matmul"} do
      if prompt:find(bench.task(name).prototype, 1, true) or (name == "matmul" and prompt:find("matmul_optimized")) then
        answer = dofile(here .. "/../bench/tasks/" .. name .. ".lua").plain
        seen[#seen + 1] = name
      end
    end
    return {fenced(assert(answer, "a prompt of no known task"))}
  end, {})
end

t.test("experiment 1 on a mixture: each group its task's, rewards a share of each task's roofline", function()
  local out, seen = t.tmpdir(), {}
  local argv = {[0] = "experiment1.lua", "--model=fake-model", "--tasks=axpy,dot,matmul", "--task_size=test",
                "--threads=1", "--runs=1", "--max_runs=1", "--warmup=0", "--opt=O2", "--out=" .. out, "--steps=1",
                "--G=2", "--prompts_per_step=3", "--lr=5e-7", "--beta=0", "--profile=paper"}
  local opts = require("run.options").parse(argv, exp1.spec)
  t.eq(opts.task_list, {"axpy", "dot", "matmul"})
  local deps = {policy = mixture_policy(seen), bench = bench, train = fakes.train()}
  local summaries = exp1.run(opts, deps)
  t.eq(seen, {"axpy", "dot", "matmul"}, "one step went round the three tasks")
  local run = store.open(summaries[1].dir, {log_file = false})
  local refs = run:get("references")
  for _, name in ipairs({"axpy", "dot", "matmul"}) do t.ok(refs[name] and refs[name].gflops > 0, name .. "'s yardstick") end
  local by_task = {}
  for _, s in ipairs(run:samples{}) do
    t.eq(s.status, "ok", s.extra.message)
    local name = s.extra.task
    by_task[name] = (by_task[name] or 0) + 1
    local memory = name ~= "matmul" and bench.task(name).roofline == "memory"
    local speed = memory and s.gflops * (name == "axpy" and 12 or 8) or s.gflops
    local m = run:get("machine")
    local limit = memory and m.measured_bandwidth_gbps or m.measured_peak_gflops / m.cores  -- one thread
    t.near(s.reward, 100 * speed / limit, 1e-6 * s.reward, name .. ": the reward is a share of the roofline")
    t.eq(s.extra.unit, "% of the roofline")
  end
  t.eq(by_task, {axpy = 2, dot = 2, matmul = 2})
  run:close()
  -- the report has a row per task
  local results = require "report.results"
  local seed_results = require "report.seed_results"
  local tbl = seed_results.tasks_table(results.load(out))
  for _, name in ipairs({"axpy", "dot", "matmul"}) do
    t.ok(tbl:find("| " .. name .. " | 2 | 100% |", 1, true), name .. "'s row: " .. tbl)
    t.ok(refs[name].library, name .. "'s yardstick is named for the report")
  end
  local out2, ok = require("primitives").engine(engine.scripts[1] .. "/report.lua", out)
  t.ok(ok, out2)
  local md = io.open(out .. "/report/report.md"):read("a")
  t.contains(md, "## Per task (a mixture)")
end)

t.test("experiment 2 on a mixture: a seed and pools per task, each on its own ladder", function()
  local out, seen = t.tmpdir(), {}
  local argv = {[0] = "experiment2.lua", "--model=fake-model", "--tasks=axpy,matmul", "--task_size=test",
                "--threads=1", "--runs=1", "--max_runs=1", "--warmup=0", "--opt=O2", "--out=" .. out,
                "--iterations=1", "--G=2", "--lr=0", "--profile=paper"}
  local opts = require("run.options").parse(argv, exp2.spec)
  local deps = {policy = mixture_policy(seen), bench = bench, train = fakes.train()}
  local summaries = exp2.run(opts, deps)
  local run = store.open(summaries[1].dir, {log_file = false})
  for _, task in ipairs({"axpy", "matmul"}) do
    local seed = run:sample(run:get("seed_id/" .. task))
    t.eq(seed.status, "ok", task .. "'s seed: " .. tostring(seed.extra.message))
    t.eq(seed.extra.task, task)
    t.eq(#run:get("pool/" .. task), stages.for_task(task).count, task .. ": one pool per stage of its ladder")
  end
  t.eq(run:get("seed_id"), nil, "no single-task state in a mixture")
  local groups = {}
  for _, s in ipairs(run:samples{iteration = 1}) do groups[s.extra.task] = true end
  t.ok(groups.axpy and groups.matmul, "both tasks were expanded")
  run:close()
end)

t.test("a mixture is refused with --task, with kernelcompare, or with a task lacking the size", function()
  local function fails(extra, text)
    local out, ok = require("primitives").engine(engine.scripts[1] .. "/experiment1.lua", table.unpack(extra))
    t.ok(not ok, table.concat(extra, " "))
    t.contains(out, text)
  end
  fails({"--tasks=axpy", "--task=dot"}, "--task and --tasks conflict")
  fails({"--tasks=axpy,dot", "--reward=kernelcompare"}, "--reward=kernelcompare")
  fails({"--tasks=axpy,fft"}, "fft at --task_size=train")
  fails({"--tasks=axpy,axpy"}, "'axpy' is listed twice")
end)

t.test("a task that does not exist, or a size it lacks, is the user's error in one line", function()
  local out, ok, code = require("primitives").engine(engine.scripts[1] .. "/experiment1.lua",
                                                     "--task=no_such_task", "--steps=1")
  t.ok(not ok and code ~= 0)
  t.contains(out, "--task=no_such_task: no task 'no_such_task'")
  out = require("primitives").engine(engine.scripts[1] .. "/experiment1.lua", "--task=axpy", "--task_size=huge")
  t.contains(out, "--task_size=huge")
  t.contains(out, "no size 'huge'")
end)

t.run()
