-- Experiment 1 of the paper: GRPO on fixed prompts with the raw GFLOPS reward.
--
-- Eight fixed prompts ask for every technique of Table I. Each step samples G kernels
-- per prompt, benchmarks them, rewards them by Eq. 3 (GFLOPS on success, a penalty per
-- failure) and makes one GRPO update over the step's groups. The sweep covers compiler
-- level x learning rate x KL coefficient: 2 x 2 x 3 = 12 configurations.
--
--   engine experiment1.lua --model=DIR                     # the paper's sweep
--   engine experiment1.lua --model=DIR --configs=opt=O3,lr=5e-7,beta=0
--   engine experiment1.lua --opt=O3 --lr=5e-7 --beta=0.0   # one configuration
--   engine experiment1.lua --resume                        # continue a killed run
--   engine experiment1.lua --seeds=3                       # each configuration with seeds 1, 2, 3
--   engine experiment1.lua --task=cuda:softmax_rows --model=models/small-cuda --device=cuda
--                                                          # a CUDA task: speed against libtorch
--   engine report.lua runs/experiment1                     # plots and tables
--
-- Each configuration writes runs/experiment1/<config>/ (see docs/usage.md, "Experiments").

local cli = require "core.cli"
local metrics = require "method.metrics"
local options = require "run.options"
local prompts = require "method.prompts"
local runs = require "run.runs"

local M = {}

M.spec = options.spec{
  cuda_tasks = true,  -- --task=cuda:NAME (scripts/lib/method/cuda_eval.lua)
  description = "Experiment 1: GRPO on eight fixed prompts, raw GFLOPS reward, swept over "
    .. "compiler level x learning rate x beta.",
  options = {
    {"out", "runs/experiment1", "run directory (one subdirectory per configuration)"},
    {"steps", 200, "GRPO steps per configuration", min = 1},
    {"prompts_per_step", 8, "fixed prompts (groups) per step, taken in turn", min = 1},
    {"opt", {"O0", "O3"}, "compiler levels to sweep", choices = {"O0", "O1", "O2", "O3"}},
    {"lr", {2e-7, 5e-7}, "learning rates to sweep (0: sample and evaluate only)", min = 0},
    {"beta", {0.0, 0.001, 0.01}, "KL coefficients to sweep", min = 0},
    {"reward", "gflops", "reward scheme of reward.lua: gflops (Eq. 3), normalized, "
     .. "kernelcompare (against the naive kernel)", check = options.check_reward},
  },
  profiles = {
    paper = {},
    -- For the default small model on a laptop: learning (lr > 0) against the same steps
    -- without it (lr = 0), each with seeds 1 to 4, so that the report can say whether
    -- learning gains more than seed noise (20 steps did not, over six seeds; 40 do:
    -- docs/history.md). About 25 minutes on two cores.
    small = {steps = 40, G = 16, prompts_per_step = 2, max_tokens = 512, size = 128,
             timeout = 2.0, runs = 2, opt = {"O3"}, lr = {0.0, 3e-4}, beta = {0.0}, seeds = "4"},
  },
}

-- The configurations the options select, in the paper's order. A CUDA task has no
-- compiler level to sweep (NVRTC compiles at its own).
function M.configs(opts)
  if require("method.cuda_eval").task_name(opts.task) then return runs.configs(opts, {{"lr", opts.lr}, {"beta", opts.beta}}) end
  return runs.configs(opts, {{"opt", opts.opt}, {"lr", opts.lr}, {"beta", opts.beta}})
end

-- Runs one configuration, opened by runs.with_run, from its last committed step to
-- opts.steps. Returns its counters.
local function run_steps(run, session, name, opts)
  local fixed = prompts.fixed_list(session.task_names, session.tasks)
  local reward_ctx = {}
  if opts.reward == "kernelcompare" then reward_ctx.baseline_gflops = session:baseline_speed() end
  local first = run:get("step", 0) + 1
  local bar = metrics.progress(opts.steps - first + 1, name)  -- the steps left to run

  -- Each step: sample G completions per prompt, judge them in one batch, one GRPO update
  -- over the step's groups (none when lr = 0), and commit. --async=1 overlaps the next
  -- step's sampling and this step's update with evaluation (runs.pipeline).
  local async, last_commit = opts.async == 1, sys.now()
  local how = {
    describe = function(item, record) record.kind, record.step, record.config = "step", item.step, name end,
    store = function(item)
      for g, text in ipairs(item.texts) do
        session:record(text, item.completions[g], item.results[g],
                       {iteration = item.step, config_id = name, extra = {group = g, task = item.group_tasks and item.group_tasks[g]}})
      end
    end,
    mark = function(item) run:set("step", item.step) end,
  }
  runs.pipeline(first, opts.steps, async, {
    sample = function(step)
      local t0 = sys.now()
      local chosen = prompts.of_step(fixed, step, opts.prompts_per_step)
      local messages, group_tasks = {}, {}
      for i, p in ipairs(chosen) do messages[i], group_tasks[i] = p.messages, p.task end
      local texts, completions = session:sample(messages, opts.seed * 100003 + step, group_tasks)
      return session:item({step = step, group_tasks = session.mixture and group_tasks or nil}, texts, completions,
                          sys.now() - t0)
    end,
    start = function(item) session:start_item(item, nil, async) end,
    collect = function(item) session:collect_item(item, opts.reward, reward_ctx, async) end,
    settle = function(item)
      local record = session:commit({item}, how, last_commit)[1]
      last_commit = sys.now()
      metrics.show(bar, item.step - first + 1, record)
    end,
  })
  bar:finish()
  return {steps = run:get("step", 0)}
end

-- M.run(opts, deps) runs every selected configuration (deps: the primitives, wiring.lua);
-- M.main(argv) parses the command line, runs, and prints a line per run.
runs.entry_points(M, "experiment1", run_steps, "steps")

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
