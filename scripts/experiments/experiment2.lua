-- Experiment 2 of the paper: GRPO inside the Staged Quality-Diversity loop (Fig. 1).
--
-- A pool per stage of Table I. Each iteration selects from every stage the top 40% of
-- the successful kernels (deepened into the next stage), the next 30% (improved at the
-- same stage) and 30% of the erroneous ones (repaired), plus the seed code; expands each
-- selected kernel into G children with its prompt, benchmarks them under the stage's
-- rules, rewards them (GFLOPS / group max x 100 on success, Eq. 3 penalties otherwise),
-- makes one GRPO update per group (--update_groups: per that many groups), and files the children into the next pools by stage.
-- Every child is stored with its parent, so any kernel's lineage can be printed.
-- The sweep: compiler level (O0, O1, O3) x learning rate (0, 5e-7), beta = 0.
--
--   engine experiment2.lua --model=DIR                 # the paper's sweep, 9 iterations
--   engine experiment2.lua --model=DIR --configs=opt=O3,lr=5e-7
--   engine experiment2.lua --resume                    # continue a killed run
--   engine experiment2.lua --seeds=3                   # each configuration with seeds 1, 2, 3
--   engine report.lua runs/experiment2

local cli = require "core.cli"
local metrics = require "method.metrics"
local options = require "run.options"
local prompts = require "method.prompts"
local runs = require "run.runs"
local sqd = require "method.sqd"
local stages = require "method.stages"

local M = {}

M.spec = options.spec{
  description = "Experiment 2: GRPO within Staged Quality-Diversity, swept over compiler "
    .. "level x learning rate (beta = 0).",
  options = {
    {"out", "runs/experiment2", "run directory (one subdirectory per configuration)"},
    {"iterations", 9, "SQD iterations per configuration", min = 1},
    {"pool_size", 10, "most kernels kept per stage pool (0: no bound)", min = 0},
    {"opt", {"O0", "O1", "O3"}, "compiler levels to sweep", choices = {"O0", "O1", "O2", "O3"}},
    {"lr", {0.0, 5e-7}, "learning rates to sweep (0: the no-learning baseline)", min = 0},
    {"beta", 0.0, "KL coefficient", min = 0},
    {"update_groups", 1, "groups (selected kernels, G children each) one GRPO update sees; "
     .. "an iteration's last update may see fewer (1: the paper's update per group)", min = 1},
    {"reward", "normalized", "reward scheme of reward.lua: normalized (Experiment 2), "
     .. "gflops (Eq. 3), kernelcompare", check = options.check_reward},
  },
  profiles = {
    paper = {},
    -- For the default small model on a laptop: 12 SQD iterations with and without
    -- learning, seeds 1, 2 and 3. With G = 8 one group is too few samples for an update
    -- (docs/history.md): an update sees 4 groups, whose rewards are scaled by the batch's
    -- spread, so a group of kernels that differ only by timing noise weighs little; over
    -- the run's ~45 updates lr = 3e-4 declined late, lr = 1e-4 gained in every seed.
    small = {iterations = 12, G = 8, pool_size = 4, max_tokens = 512, size = 128,
             timeout = 2.0, runs = 2, opt = {"O3"}, lr = {0.0, 1e-4}, seeds = "3",
             update_groups = 4, scale_rewards = "batch"},
  },
}

function M.configs(opts)
  return runs.configs(opts, {{"opt", opts.opt}, {"lr", opts.lr}})
end

-- Where a task's SQD state lives in the run store: "pool", "seed_id"; in a mixture (--tasks)
-- one of each per task, "pool/NAME", "seed_id/NAME".
local function key(base, session, task)
  return session.mixture and (base .. "/" .. task) or base
end

-- Iteration 0: the seed code of each task, evaluated once, the root of every lineage.
local function plant_seeds(run, session, name)
  for _, task in ipairs(session.task_names) do
    if not run:get(key("seed_id", session, task)) then
      local completions = {{text = prompts.seed(session.tasks[task]), whole = true}}
      local results = session:judge(completions, 1, "gflops", nil, task)
      run:atomic(function()
        local id = session:record("", completions, results,
                                  {iteration = 0, stage = 1, config_id = name,
                                   extra = {action = "seed", task = session.mixture and task or nil}})[1]
        run:set(key("seed_id", session, task), id)
        run:set("iteration", 0)
      end)
      log.info("seed", {task = task, status = results[1].status, gflops = results[1].gflops or "-"})
    end
  end
end

-- The plan of iteration `it`: made once and stored, so a resumed run expands the same
-- selections and skips the groups already done.
local function iteration_plan(run, session, opts, it)
  local plan = run:get("plan")
  if plan and plan.iteration == it then return plan end
  plan = {iteration = it, picks = {}}
  for t, task in ipairs(session.task_names) do  -- each task's pools, its own ladder
    local pools, seed = sqd.load_pools(run, key("pool", session, task), key("seed_id", session, task))
    local rng = sqd.rng(opts.seed * 7919 + it + (t - 1) * 1000003)
    for _, p in ipairs(sqd.plan(pools, seed, {rng = rng, stages = stages.for_task(task)})) do
      plan.picks[#plan.picks + 1] = {id = p.node.id, action = p.action, stage = p.stage,
                                     task = session.mixture and task or nil}
    end
  end
  run:atomic(function()
    run:set("plan", plan)
    run:set("group", 0)
  end)
  return plan
end

-- Expands selected kernels into G children each: sample, judge, update, record; the
-- phases of runs.pipeline over the iteration's groups. One GRPO update sees
-- --update_groups groups (fewer at the iteration's end); they are committed together
-- after it, so a killed run resumes at the first group of an update, from the policy
-- that sampled it.
local function expansion(run, session, opts, name, it, plan, on_commit)
  local async, last_commit = opts.async == 1, sys.now()
  local pending = {}  -- groups evaluated, waiting for the update that commits them
  local step
  local how = {
    describe = function(item, record)
      step = step + 1
      record.kind, record.label, record.step = "group", "group", step
      record.iteration, record.group, record.action, record.stage = it, item.g, item.pick.action, item.pick.stage
      record.parent, record.config = item.pick.id, name
    end,
    store = function(item)
      session:record(item.texts[1], item.completions[1], item.results[1],
                     {iteration = it, stage = item.pick.stage, parent_id = item.pick.id, config_id = name,
                      extra = {action = item.pick.action, group = item.g, task = item.pick.task}})
    end,
    mark = function(item)
      run:set("step", step)
      run:set("group", item.g)
    end,
  }
  return {
    sample = function(g)
      local pick = plan.picks[g]
      local node = sqd.node(run:sample(pick.id))
      local messages = sqd.prompt({node = node, action = pick.action, stage = pick.stage},
                                  session.tasks[pick.task or session.task_names[1]])
      local t0 = sys.now()
      local texts, completions = session:sample({messages}, opts.seed * 100003 + it * 1009 + g, {pick.task})
      return session:item({g = g, pick = pick, node = node, group_tasks = pick.task and {pick.task} or nil},
                          texts, completions, sys.now() - t0)
    end,
    start = function(item) session:start_item(item, item.pick.stage, async) end,
    collect = function(item)
      session:collect_item(item, opts.reward, {baseline_gflops = item.node.gflops or 0}, async)
    end,
    settle = function(item)
      pending[#pending + 1] = item
      if #pending < opts.update_groups and item.g < #plan.picks then return end
      local items = pending
      pending, step = {}, run:get("step", 0)
      local records = session:commit(items, how, last_commit)
      last_commit = sys.now()
      for i, done in ipairs(items) do on_commit(done.g, records[i]) end
    end,
  }
end

-- Files the iteration's children into the next pools and records the iteration.
local function close_iteration(run, session, opts, name, it)
  local children = run:samples{iteration = it}
  local nodes = {}
  for _, s in ipairs(children) do
    local task = session.mixture and s.extra.task or session.task_names[1]
    nodes[task] = nodes[task] or {}
    table.insert(nodes[task], sqd.node(s))
  end
  local record = metrics.summary(children)
  record.kind, record.iteration, record.config = "iteration", it, name
  local pools = {}
  for t, task in ipairs(session.task_names) do
    local ladder = stages.for_task(task)
    local filed = sqd.file(nodes[task] or {}, {pool_size = opts.pool_size, stages = ladder,
                                               rng = sqd.rng(opts.seed * 104729 + it + (t - 1) * 1000003)})
    local sizes = {}
    for s = 1, ladder.count do sizes[s] = #filed[s] end
    if session.mixture then
      record.pools = record.pools or {}
      record.pools[task] = sizes
    else
      record.pool = sizes
    end
    pools[task] = sqd.pool_ids(filed, ladder)
  end
  run:atomic(function()
    for _, task in ipairs(session.task_names) do run:set(key("pool", session, task), pools[task]) end
    run:set("plan", nil)
    run:set("iteration", it)
    run:log(record)
  end)
  return record
end

-- Runs one configuration, opened by runs.with_run, from its last finished iteration to
-- opts.iterations. Returns its counters.
local function run_iterations(run, session, name, opts)
  plant_seeds(run, session, name)

  for it = run:get("iteration", 0) + 1, opts.iterations do
    local plan = iteration_plan(run, session, opts, it)
    local done = run:get("group", 0)  -- groups of this iteration already committed
    local bar = metrics.progress(#plan.picks - done, string.format("%s it %d/%d", name, it,
                                                                   opts.iterations))
    runs.pipeline(done + 1, #plan.picks, opts.async == 1,
                  expansion(run, session, opts, name, it, plan,
                            function(g, record) metrics.show(bar, g - done, record) end))
    bar:finish()
    local summary = close_iteration(run, session, opts, name, it)
    local pools = summary.pool and table.concat(summary.pool, ",") or ""
    for _, task in ipairs(session.mixture and session.task_names or {}) do
      pools = pools .. (pools == "" and "" or " ") .. task .. ":" .. table.concat(summary.pools[task], ",")
    end
    log.info("iteration", {iteration = it, reward = string.format("%.2f", summary.mean_reward),
                           max_gflops = summary.max_gflops or "-",
                           statuses = metrics.counts_text(summary.counts), pools = pools})
  end
  return {iterations = run:get("iteration", 0)}
end

-- M.run(opts, deps) runs every selected configuration (deps: the primitives, wiring.lua);
-- M.main(argv) parses the command line, runs, and prints a line per run.
runs.entry_points(M, "experiment2", run_iterations, "iterations")

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
