-- Experiment 3: multi-turn refinement with feedback, against single-turn at the same number
-- of evaluated kernels.
--
-- An episode is T turns on one of experiment 1's fixed prompts: turn 1 answers the prompt,
-- each later turn is shown the previous turn's kernel and what its evaluation said
-- (feedback.text; prompts.refine) and writes the next one. Every turn's kernels are judged,
-- one batch per turn of a step, and rewarded by --reward (Eq. 3 by default). A turn earns
-- its kernel's reward (--turn_reward=raw) or its gain over the previous turn's
-- (improvement); the returns are discounted (--discount), R_t = sum_{k>=t} gamma^(k-t) r_k,
-- and each turn's advantage is its return minus the mean of the other episodes' returns
-- at that turn, over the G episodes of one prompt (turn-level leave-one-out, TRLOO:
-- episodes.lua). One GRPO update per step covers every turn's completions; since an
-- episode's turns after the first have prompts of their own, a configuration of T > 1
-- turns hands the trainer every completion as a group of one carrying its advantage.
--
-- The same number of evaluated kernels in every configuration: G is the number of episodes
-- per prompt, so a configuration of T turns evaluates G x T kernels per prompt and step;
-- the single-turn control (T = 1) samples G x T_max kernels per prompt (T_max: the largest
-- of --turns) and trains on them as one ordinary GRPO group, as experiment 1 does. With
-- --turns=1,3 and G = 8, both evaluate 24 kernels per prompt and step. T_max is part of
-- every run's identity (the control's group size depends on it).
--
-- The sweep: compiler level x learning rate x turns.
--
--   engine experiment3.lua --model=DIR                       # turns 1 and 3 x learning rates
--   engine experiment3.lua --turns=1,2,4 --discount=0.9 --turn_reward=improvement
--   engine experiment3.lua --resume                          # continue a killed run at its turn
--   engine experiment3.lua --seeds=4                         # each configuration with seeds 1..4
--   engine report.lua runs/experiment3                       # plots, tables, turns against single-turn
--
-- A killed run resumes at the next turn it had not evaluated: each turn of a step but the
-- last is kept in the run's state ("open_step": prompts, completions with their tokens,
-- judged kernels, feedback), and the step's samples, update and metrics commit together
-- after its last turn, as experiment 1's do.

local checks = require "run.checks"
local cli = require "core.cli"
local episodes = require "method.episodes"
local feedback = require "method.feedback"
local metrics = require "method.metrics"
local options = require "run.options"
local prompts = require "method.prompts"
local runs = require "run.runs"
local wiring = require "method.wiring"

local M = {}

-- What a later turn's prompt says of the kernel before it. A script may replace it, as
-- sqd.feedback: record is the judged kernel; ctx holds roofline (the task's limit on the
-- measuring machine, in the kernel's unit, when measured) and threads.
M.feedback = function(record, ctx) return feedback.text(record, ctx) end

-- --turns: each value once (two runs of one configuration would share a directory).
local function check_turns(opts)
  local seen = {}
  for _, t in ipairs(opts.turns or {}) do
    if seen[t] then return "--turns: " .. t .. " is listed twice" end
    seen[t] = true
  end
  if opts.turns and #opts.turns == 0 then return "--turns: no value given" end
end

M.spec = options.spec{
  description = "Experiment 3: multi-turn refinement with feedback, GRPO with turn-level "
    .. "leave-one-out advantages, against single-turn at the same number of evaluated "
    .. "kernels; swept over compiler level x learning rate x turns.",
  options = {
    {"out", "runs/experiment3", "run directory (one subdirectory per configuration)"},
    {"steps", 200, "GRPO steps per configuration", min = 1},
    {"prompts_per_step", 8, "fixed prompts per step (G episodes each), taken in turn", min = 1},
    {"G", 64, "episodes per prompt (the group whose other episodes are a turn's baseline); the "
     .. "single-turn control samples G x the largest --turns completions per prompt", min = 1},
    {"turns", {1, 3}, "turns per episode to sweep; 1 is the single-turn control, which samples "
     .. "G x the largest value kernels per prompt, so that every configuration evaluates as many",
     min = 1},
    {"discount", 1.0, "gamma of the returns R_t = sum over k >= t of gamma^(k-t) r_k", min = 0, max = 1},
    {"turn_reward", "raw", "what a turn earns: raw (its kernel's reward, --reward) or improvement "
     .. "(its reward minus the previous turn's; turn 1 its own)", choices = episodes.turn_reward_kinds},
    {"opt", {"O3"}, "compiler levels to sweep", choices = {"O0", "O1", "O2", "O3"}},
    {"lr", {2e-7, 5e-7}, "learning rates to sweep (0: sample and evaluate only)", min = 0},
    {"beta", 0.0, "KL coefficient", min = 0},
    {"reward", "gflops", "reward scheme of reward.lua: gflops (Eq. 3), normalized, "
     .. "kernelcompare (against the naive kernel)", check = options.check_reward},
    {"scale_rewards", "none", "what divides an advantage: none (TRLOO's and Dr. GRPO's), group "
     .. "(the std of the group's returns at that turn + 1e-4; the single-turn control: its "
     .. "group's reward std, as the trainer scales), batch (the same std over the step's groups)",
     choices = episodes.scales},
    {"async", 0, "not offered here (0): a turn's prompts need the previous turn's evaluation",
     check = function(v)
       if v == 0 then return true end
       return nil, "experiment3 runs a step's turns in order (each turn's prompts need the previous "
                   .. "turn's evaluation): leave --async at 0"
     end},
  },
  check = check_turns,
  profiles = {
    full = {},
    -- For the default small model on a laptop: three turns against single-turn with
    -- learning, seeds 1 to 4; both evaluate 2 x 8 x 3 = 48 kernels a step, 20 steps.
    small = {steps = 20, G = 8, prompts_per_step = 2, max_tokens = 512, size = 128,
             timeout = 2.0, runs = 2, opt = {"O3"}, lr = {3e-4}, turns = {1, 3}, seeds = "4"},
  },
}

function M.configs(opts)
  return runs.configs(opts, {{"opt", opts.opt}, {"lr", opts.lr}, {"turns", opts.turns}})
end

-- The largest value of --turns: the single-turn control samples G x this many kernels.
function M.max_turns(opts)
  local most = 1
  for _, t in ipairs(opts.turns) do most = math.max(most, t) end
  return most
end

-- Completions per prompt at turn 1: G episodes, or the control's G x T_max kernels.
function M.group_size(opts, turns)
  return turns == 1 and opts.G * (opts.max_turns or M.max_turns(opts)) or opts.G
end

-- Session:sample with n completions a prompt instead of --G: turn 1 draws a group's
-- episodes from its one prompt, a later turn one completion from each episode's own prompt
-- (tasks[i]: the task of prompt i).
local function sample(session, message_lists, seed, n, tasks)
  local view = setmetatable({opts = setmetatable({G = n}, {__index = session.opts})}, {__index = session})
  return view:sample(message_lists, seed, tasks)
end

-- A distinct sampling seed per run seed, step and turn.
local function turn_seed(opts, step, turn)
  return opts.seed * 100003 + step * 1009 + turn
end

local function user_message(messages)
  for _, m in ipairs(messages) do if m.role == "user" then return m.content end end
end

-- The prompts of a turn after the first, one per episode, flat group by group: the
-- previous turn's kernel and its feedback, or the first request again when it had none.
local function refine_messages(session, chosen, previous)
  local lists, tasks = {}, {}
  for p, group in ipairs(previous.groups) do
    local task, request = session.tasks[chosen[p].task], user_message(chosen[p].messages)
    for _, e in ipairs(group) do
      lists[#lists + 1] = prompts.refine(e.result.code, e.feedback, task, request)
      tasks[#lists] = chosen[p].task
    end
  end
  return lists, tasks
end

-- The context feedback.text reads for a kernel of task `name`.
local function feedback_ctx(session, name)
  local threads = session.opts.threads
  return {roofline = session:roofline(name), threads = threads > 0 and threads or nil}
end

-- Plays turn t of a step: samples (from the fixed prompts, or from the previous turn's
-- kernels and feedback), judges the turn's kernels in one batch, and, when a turn follows,
-- words the feedback on each. Returns the turn: groups[p][i] = {text = prompt, completion
-- =, result = (its reward in .reward), feedback =}, with its seconds.
local function play_turn(session, chosen, step, t, last, previous, size, reward_ctx)
  local opts = session.opts
  local t0 = sys.now()
  local texts, completions = {}, {}
  if t == 1 then
    local lists, tasks = {}, {}
    for p, c in ipairs(chosen) do lists[p], tasks[p] = c.messages, c.task end
    local rendered, out = sample(session, lists, turn_seed(opts, step, 1), size, tasks)
    for p in ipairs(chosen) do
      texts[p], completions[p] = {}, out[p]
      for i = 1, #out[p] do texts[p][i] = rendered[p] end
    end
  else
    local lists, tasks = refine_messages(session, chosen, previous)
    local rendered, out = sample(session, lists, turn_seed(opts, step, t), 1, tasks)
    local k = 0
    for p, group in ipairs(previous.groups) do
      texts[p], completions[p] = {}, {}
      for i = 1, #group do
        k = k + 1
        texts[p][i], completions[p][i] = rendered[k], out[k][1]
      end
    end
  end
  local t1 = sys.now()
  local group_tasks
  if session.mixture then
    group_tasks = {}
    for p, c in ipairs(chosen) do group_tasks[p] = c.task end
  end
  local results = session:finish_judging(session:start_judging(completions, nil, false, group_tasks),
                                         opts.reward, reward_ctx)
  local turn = {groups = {}, sample_s = t1 - t0}
  for p, rs in ipairs(results) do
    local ctx = not last and feedback_ctx(session, chosen[p].task) or nil
    turn.groups[p] = {}
    for i, r in ipairs(rs) do
      turn.groups[p][i] = {text = texts[p][i], completion = completions[p][i], result = r,
                           feedback = ctx and M.feedback(r, ctx) or nil}
    end
  end
  turn.evaluate_s = sys.now() - t1
  return turn
end

-- What of a judged kernel the run's state keeps between turns: what the step's samples,
-- the re-measurement and the report read.
local kept = {"status", "gflops", "gbps", "speed", "unit", "reward", "code", "completion", "message",
              "reason", "techniques", "backend", "max_rel_error", "features", "node", "task", "times",
              "compile_ms", "median", "min", "shared_with"}

-- A turn as the run's state holds it: plain data. The completions keep their tokens and
-- log-probs when the run learns, so that the step's update can train on them after a
-- resume (as tables, with their prompt).
local function stored_turn(turn, learns)
  local groups = {}
  for p, group in ipairs(turn.groups) do
    groups[p] = {}
    for i, e in ipairs(group) do
      local r = {}
      for _, k in ipairs(kept) do r[k] = e.result[k] end
      local c = {text = e.completion.text, finish_reason = e.completion.finish_reason}
      if learns then c.tokens, c.logprobs = e.completion.tokens, e.completion.logprobs end
      groups[p][i] = {text = e.text, completion = c, result = r, feedback = e.feedback}
    end
  end
  return {groups = groups, sample_s = turn.sample_s, evaluate_s = turn.evaluate_s}
end

-- Records turn t < T as done: the step's turns so far, in the run's state, so that a
-- killed run resumes at turn t + 1 with these kernels and their feedback.
local function save_turns(run, session, step, turns)
  local stored = {}
  for t, turn in ipairs(turns) do
    turn.stored = turn.stored or stored_turn(turn, session.learns)
    stored[t] = turn.stored
  end
  run:set("open_step", {step = step, turns = stored})
end

-- The turns of `step` a killed run had evaluated (none when it stopped between steps).
local function restored_turns(run, step, T)
  local open = run:get("open_step")
  if not (open and open.step == step) then return {} end
  if #open.turns >= T then
    error(string.format("the run's state holds %d turns of step %d, a configuration of %d turns",
                        #open.turns, step, T))
  end
  local turns = {}
  for t, s in ipairs(open.turns) do
    turns[t] = {groups = s.groups, sample_s = s.sample_s, evaluate_s = s.evaluate_s, stored = s}
  end
  log.info("resuming a step at its next turn", {step = step, turn = #turns + 1})
  return turns
end

-- The update's groups. The single-turn control: one ordinary group per prompt, as
-- experiment 1's. T > 1: each turn's completion a group of one with its turn reward and its
-- TRLOO advantage, which are also kept on the episode's entry for its sample.
local function train_groups(turns, opts)
  local groups = {}
  if #turns == 1 then
    for p, group in ipairs(turns[1].groups) do
      local g = {completions = {}, rewards = {}}
      for i, e in ipairs(group) do g.completions[i], g.rewards[i] = e.completion, e.result.reward end
      groups[p] = g
    end
    return groups
  end
  local earned, returns = {}, {}  -- [p][i][t]
  for p, group in ipairs(turns[1].groups) do
    earned[p], returns[p] = {}, {}
    for i = 1, #group do
      local raw = {}
      for t, turn in ipairs(turns) do raw[t] = turn.groups[p][i].result.reward end
      earned[p][i] = episodes.turn_rewards(raw, opts.turn_reward)
      returns[p][i] = episodes.returns(earned[p][i], opts.discount)
    end
  end
  local advantages = episodes.advantages(returns, opts.scale_rewards)
  for t, turn in ipairs(turns) do
    for p, group in ipairs(turn.groups) do
      for i, e in ipairs(group) do
        e.turn_reward, e.return_, e.advantage = earned[p][i][t], returns[p][i][t], advantages[p][i][t]
        groups[#groups + 1] = {prompt = e.text, completions = {e.completion}, rewards = {e.turn_reward},
                               advantages = {e.advantage}}
      end
    end
  end
  return groups
end

-- Every judged kernel of a list of turns.
local function results_of(turns)
  local all = {}
  for _, turn in ipairs(turns) do
    for _, group in ipairs(turn.groups) do
      for _, e in ipairs(group) do all[#all + 1] = e.result end
    end
  end
  return all
end

-- A turn's figures for the step's record: mean reward, the share that verified, the best
-- first measurement (the step's re-measured best is the record's max_gflops).
local function turn_figures(turn, t)
  local s = metrics.summary(results_of({turn}))
  return {turn = t, kernels = s.kernels, mean_reward = s.mean_reward,
          verified = s.kernels > 0 and (s.counts.ok or 0) / s.kernels or 0, best_gflops = s.max_gflops_measured}
end

-- Stores the step's samples, each turn's kernel a child of the same episode's previous
-- one, so that a kernel's lineage is its episode. Turn 1's prompt is stored once per
-- group (it is the group's), a later turn's with each sample.
local function store_step(session, turns, chosen, name, step)
  local parents = {}
  for t, turn in ipairs(turns) do
    for p, group in ipairs(turn.groups) do
      parents[p] = parents[p] or {}
      for i, e in ipairs(group) do
        local ids = session:record((t > 1 or i == 1) and e.text or "", {e.completion}, {e.result},
          {iteration = step, parent_id = parents[p][i], config_id = name,
           extra = {group = p, episode = i, turn = t, task = session.mixture and chosen[p].task or nil,
                    feedback = e.feedback, turn_reward = e.turn_reward, ["return"] = e.return_,
                    advantage = e.advantage}})
        parents[p][i] = ids[1]
      end
    end
  end
end

-- The step's end, as Session:commit: one GRPO update over every turn's completions (none
-- when lr = 0), the re-measurement of the step's best kernel, then one transaction: the
-- samples, the checkpoint, the metrics record and the resume point, which clears the
-- step's open turns. Returns the record.
local function commit_step(run, session, turns, chosen, name, step, since)
  local opts = session.opts
  local groups = train_groups(turns, opts)
  local t0 = sys.now()
  local stats = session:update(groups)
  local t1 = sys.now()
  local all = results_of(turns)
  session:start_confirm(all):finish()
  local now = sys.now()

  local record = metrics.summary(all)
  record.kind, record.step, record.config, record.turns = "step", step, name, #turns
  record.per_turn = {}
  local sample_s, evaluate_s = 0, 0
  for t, turn in ipairs(turns) do
    record.per_turn[t] = turn_figures(turn, t)
    sample_s, evaluate_s = sample_s + turn.sample_s, evaluate_s + turn.evaluate_s
  end
  record.seconds = {sample = sample_s, evaluate = evaluate_s + (now - t1), update = t1 - t0, wall = now - since}
  record.staleness = 0
  if stats then record.kl, record.loss, record.train = stats.kl, stats.loss, stats end
  run:atomic(function()
    store_step(session, turns, chosen, name, step)
    if stats then
      local updates = run:get("updates", 0) + 1
      session:checkpoint(updates)
      run:set("updates", updates)
    end
    run:log(record)
    run:set("step", step)
    run:set("open_step", nil)
  end)
  return record
end

-- The log line of a step's turns: mean reward and share verified per turn.
local function show_turns(record)
  if #record.per_turn < 2 then return end
  local rewards, verified = {}, {}
  for t, f in ipairs(record.per_turn) do
    rewards[t] = string.format("%.2f", f.mean_reward)
    verified[t] = string.format("%.0f%%", 100 * f.verified)
  end
  log.info("turns", {step = record.step, reward = table.concat(rewards, " "), verified = table.concat(verified, " ")})
end

-- Runs one configuration, opened by runs.with_run, from its last committed step (and,
-- within a step, its last evaluated turn) to opts.steps. Returns its counters.
local function run_steps(run, session, name, opts)
  local T = session.config.turns
  local size = M.group_size(opts, T)
  local fixed = prompts.fixed_list(session.task_names, session.tasks)
  local reward_ctx = {}
  if opts.reward == "kernelcompare" then reward_ctx.baseline_gflops = session:baseline_speed() end
  local first = run:get("step", 0) + 1
  local bar = metrics.progress(opts.steps - first + 1, name)
  local last_commit = sys.now()
  for step = first, opts.steps do
    local chosen = prompts.of_step(fixed, step, opts.prompts_per_step)
    local turns = restored_turns(run, step, T)
    for t = #turns + 1, T do
      turns[t] = play_turn(session, chosen, step, t, t == T, turns[t - 1], size, reward_ctx)
      if t < T then save_turns(run, session, step, turns) end
    end
    local record = commit_step(run, session, turns, chosen, name, step, last_commit)
    last_commit = sys.now()
    metrics.show(bar, step - first + 1, record)
    show_turns(record)
  end
  bar:finish()
  return {steps = run:get("step", 0)}
end

-- The control's G x T_max completions a prompt against the memory free now (checks.lua
-- checks --G alone), before anything is made.
local function check_control_memory(opts, deps)
  local control = M.group_size(opts, 1)
  if control == opts.G then return end
  deps = wiring.deps(deps)
  if deps.injected then return end
  local view = setmetatable({G = control}, {__index = opts})
  local ok, err = pcall(checks.check_memory, view, wiring.model_dir(opts, deps), wiring.device(opts.device, deps.policy))
  if ok then return end
  if not cli.is_user_error(err) then error(err, 0) end
  cli.fail(string.format("the single-turn control samples --G x the largest --turns = %d completions "
                         .. "a prompt: %s", control, tostring(err)))
end

-- M.run(opts, deps) runs every selected configuration (deps: the primitives, wiring.lua);
-- M.main(argv) parses the command line, runs, and prints a line per run.
runs.entry_points(M, "experiment3", run_steps, "steps")

local run_sweep = M.run
function M.run(opts, deps)
  opts.max_turns = M.max_turns(opts)  -- in every run's identity: the control's group size
  local has_control, multi = false, false
  for _, t in ipairs(opts.turns) do
    if t == 1 then has_control = true else multi = true end
  end
  if has_control then check_control_memory(opts, deps) end
  if multi and opts.G < 2 then
    log.warn("--G=1: an episode has no other in its group to be compared with, so the multi-turn "
             .. "configurations' advantages are 0 and their updates change nothing")
  end
  return run_sweep(opts, deps)
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
