-- Experiment 3 with the stand-in primitives (fakes.lua): multi-turn episodes against the
-- single-turn control at the same number of evaluated kernels, the prompts of later turns,
-- the advantages the trainer gets, a run stopped after a step's second turn resumed at its
-- third, the report's tables, and the options' errors.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local args = require "engine.args"
local episodes = require "method.episodes"
local feedback = require "method.feedback"
local fakes = require "fakes"
local primitives = require "primitives"
local prompts = require "method.prompts"
local results = require "report.results"
local seed_results = require "report.seed_results"
local turn_results = require "report.turn_results"

local exp3 = dofile(engine.scripts[1] .. "/experiment3.lua")

local function parse(extra) return primitives.parse(exp3, "experiment3", extra) end

-- G = 2 episodes per prompt, two prompts a step.
local E3 = {"--G=2", "--prompts_per_step=2", "--size=64", "--opt=O3", "--lr=5e-7"}

local function with(list, ...)
  local out = {table.unpack(list)}
  for _, o in ipairs{...} do out[#out + 1] = o end
  return out
end

local function open(dir) return store.open(dir, {log_file = false}) end

-- The step records of a run.
local function steps(run)
  local out = {}
  for _, m in ipairs(run:metrics()) do if m.kind == "step" then out[#out + 1] = m end end
  return out
end

t.test("turns 1 and 3 evaluate the same kernels a step; later turns see the kernel before and its feedback", function()
  local out = t.tmpdir()
  local deps = fakes.deps()
  local summaries = exp3.run(parse(with(E3, "--out=" .. out, "--steps=2", "--turns=1,3")), deps)
  t.eq(#summaries, 2)
  t.eq(summaries[1].name, "lr=5e-07,opt=O3,turns=1")
  t.eq(summaries[2].name, "lr=5e-07,opt=O3,turns=3")
  for _, s in ipairs(summaries) do
    local run = open(s.dir)
    t.eq(run:get("step"), 2)
    t.eq(run:get("open_step"), nil, "no step left open")
    -- 2 steps x 2 prompts x G x T_max, whatever the configuration's turns
    t.eq(run:count(), 2 * 2 * 2 * 3, s.name)
    for _, m in ipairs(steps(run)) do
      t.eq(m.kernels, 12, s.name .. " step " .. m.step)
      t.eq(#m.per_turn, s.config.turns)
      local n = 0
      for _, f in ipairs(m.per_turn) do
        n = n + f.kernels
        t.ok(f.verified >= 0 and f.verified <= 1 and type(f.mean_reward) == "number")
      end
      t.eq(n, 12)
    end
    t.eq(run:config().max_turns, 3, "the control's group size is part of every run's identity")
    run:close()
  end
  t.eq(#deps.train.trainers, 2)
  -- the control trains as experiment 1 does: one group of G x T_max per prompt, no advantages
  local control, multi = deps.train.trainers[1], deps.train.trainers[2]
  t.eq(control.updates, 2)
  t.eq(#control.groups, 2 * 2)
  for _, g in ipairs(control.groups) do
    t.eq(#g.completions, 6)
    t.eq(g.advantages, nil)
    t.eq(g.prompt, nil)
  end
  -- three turns: every completion a group of one with its prompt and advantage
  t.eq(multi.updates, 2)
  t.eq(#multi.groups, 2 * 2 * 2 * 3)
  for _, g in ipairs(multi.groups) do
    t.eq(#g.completions, 1)
    t.eq(#g.advantages, 1)
    t.ok(type(g.prompt) == "string" and g.prompt == g.completions[1].prompt)
  end
  t.eq(multi.opts.scale_rewards, "none", "experiment 3's default")

  local run = open(summaries[2].dir)
  local by_id, episodes_of = {}, {}
  for _, s in ipairs(run:samples{}) do
    by_id[s.id] = s
    local key = s.iteration .. "/" .. s.extra.group .. "/" .. s.extra.episode
    episodes_of[key] = episodes_of[key] or {}
    episodes_of[key][s.extra.turn] = s
  end
  local sums, no_code = {}, 0
  for _, s in ipairs(run:samples{}) do
    local turn = s.extra.turn
    if turn == 1 then
      t.eq(s.parent_id, nil)
    else
      -- a later turn's prompt: the previous kernel of its episode and what it was told
      local parent = by_id[s.parent_id]
      t.eq({parent.extra.turn, parent.extra.episode, parent.extra.group}, {turn - 1, s.extra.episode, s.extra.group})
      t.contains(s.prompt, "<|im_start|>assistant\n")
      t.contains(s.prompt, parent.extra.feedback)
      if parent.code ~= "" then
        t.contains(s.prompt, "Here is your previous kernel:\n```c\n" .. parent.code:gsub("%s+$", "") .. "\n```")
      else
        no_code = no_code + 1
        t.contains(s.prompt, "held no C function that could be extracted")
        t.contains(s.prompt, "Here is the request again")
      end
      if parent.status == "ok" then
        t.contains(parent.extra.feedback, "Correct. Speed: ")
      else
        t.eq(parent.extra.feedback, feedback.text{status = parent.status, message = parent.extra.message})
      end
    end
    t.eq(s.extra.feedback ~= nil, turn < 3, "feedback is worded for every turn a turn follows")
    local key = s.iteration .. "/" .. s.extra.group .. "/" .. turn
    sums[key] = (sums[key] or 0) + s.extra.advantage
  end
  -- leave-one-out advantages of a group sum to 0 at each turn; returns sum what is left
  for key, sum in pairs(sums) do t.near(sum, 0, 1e-9, key) end
  for key, turns in pairs(episodes_of) do
    local raw = {}
    for i = 1, 3 do raw[i] = turns[i].reward end
    local returns = episodes.returns(raw, 1.0)
    for i = 1, 3 do
      t.eq(turns[i].extra.turn_reward, raw[i], key)
      t.near(turns[i].extra["return"], returns[i], 1e-9, key)
    end
  end
  run:close()
  t.ok(no_code > 0, "some completion held no code, and its episode's next turn was asked again")
end)

t.test("the next prompt without extractable code says so and repeats the request", function()
  local task = {M = 64, N = 64, K = 64, opt = "O3", isa = "avx2"}
  local request = prompts.fixed(task)[3][2].content
  local msgs = prompts.refine(nil, "no definition of matmul_optimized", task, request)
  t.eq(#msgs, 2)
  t.eq(msgs[1].role, "system")
  t.contains(msgs[2].content, "no definition of matmul_optimized")
  t.contains(msgs[2].content, request)
  t.eq(prompts.refine("", "x", task)[2].content:find(prompts.task_text(task), 1, true) ~= nil, true)
  local with_code = prompts.refine("void f(void) {}\n", "Correct. Speed: 3.00 GFLOPS.", task)[2].content
  t.contains(with_code, "```c\nvoid f(void) {}\n```")
  t.contains(with_code, "Its evaluation:\n```\nCorrect. Speed: 3.00 GFLOPS.\n```")
  t.contains(with_code, "make it faster")
end)

t.test("improvement rewards, a discount, and a script's own feedback", function()
  local out = t.tmpdir()
  local old = exp3.feedback
  exp3.feedback = function(record, ctx)
    t.ok(type(ctx) == "table", "the feedback gets its context")
    return "custom words on a kernel that is " .. record.status
  end
  local ok, err = pcall(exp3.run, parse(with(E3, "--out=" .. out, "--steps=1", "--turns=2",
                                             "--turn_reward=improvement", "--discount=0.5",
                                             "--scale_rewards=group")), fakes.deps())
  exp3.feedback = old
  t.ok(ok, tostring(err))
  local run = open(out .. "/lr=5e-07,opt=O3,turns=2")
  t.eq(run:count(), 1 * 2 * 2 * 2)
  local by_id = {}
  for _, s in ipairs(run:samples{}) do by_id[s.id] = s end
  for _, s in ipairs(run:samples{}) do
    if s.extra.turn == 2 then
      local parent = by_id[s.parent_id]
      t.contains(s.prompt, "custom words on a kernel that is " .. parent.status)
      t.eq(s.extra.turn_reward, s.reward - parent.reward, "improvement")
      t.near(parent.extra["return"], parent.reward + 0.5 * (s.reward - parent.reward), 1e-9, "discounted")
      t.near(s.extra["return"], s.extra.turn_reward, 1e-9)
    end
  end
  run:close()
end)

-- Everything a run stored, in id order, for comparing two runs.
local function contents(dir)
  local run = open(dir)
  local rows = {}
  for _, s in ipairs(run:samples{}) do
    rows[#rows + 1] = {s.id, s.parent_id or 0, s.iteration, s.code, s.status, s.gflops or 0, s.reward,
                       s.prompt, s.extra.turn, s.extra.feedback or "", s.extra.advantage or 0}
  end
  local ms = {}
  for _, m in ipairs(steps(run)) do ms[#ms + 1] = {m.step, m.kernels, m.mean_reward, m.max_gflops, m.per_turn} end
  local n, updates = run:count(), run:get("updates")
  run:close()
  return rows, ms, n, updates
end

t.test("a run stopped after a step's second turn resumes at its third, as if never stopped", function()
  local clean, broken = t.tmpdir(), t.tmpdir()
  local options = with(E3, "--steps=2", "--turns=1,3", "--configs=turns=3")
  exp3.run(parse(with(options, "--out=" .. clean)), fakes.deps())

  -- bench batches: a step's three turns and the re-measurement of its best kernel; the 7th
  -- is step 2's third turn
  local deps = fakes.deps()
  local bench, calls = deps.bench, 0
  deps.bench = setmetatable({evaluate_batch = function(sources, o)
    calls = calls + 1
    if calls == 7 then error("the benchmark node went away") end
    return bench.evaluate_batch(sources, o)
  end}, {__index = bench})
  t.raises(function() exp3.run(parse(with(options, "--out=" .. broken)), deps) end, "the benchmark node went away")
  local name = "/lr=5e-07,opt=O3,turns=3"
  local run = open(broken .. name)
  t.eq(run:get("step"), 1)
  t.eq(run:count(), 12, "only step 1's samples are stored")
  local open_step = run:get("open_step")
  t.eq(open_step.step, 2)
  t.eq(#open_step.turns, 2, "step 2's first two turns are kept")
  t.eq(#open_step.turns[2].groups[1], 2)
  t.ok(open_step.turns[1].groups[1][1].feedback, "with their feedback")
  t.ok(#open_step.turns[1].groups[1][1].completion.tokens > 0, "and their completions' tokens")
  run:close()

  -- no --resume: refused; with it, the third turn is sampled and nothing before it again
  t.raises(function() exp3.run(parse(with(options, "--out=" .. broken)), fakes.deps()) end, "pass --resume")
  local again = fakes.deps()
  exp3.run(parse(with(options, "--out=" .. broken, "--resume")), again)
  t.eq(again.bench.calls, 2, "step 2's third turn and its re-measurement")
  local trainer = again.train.trainers[1]
  t.eq(trainer.updates, 2, "restored from update 1, then step 2's")
  t.eq(#trainer.groups, 2 * 2 * 3)
  local restored = 0
  for _, g in ipairs(trainer.groups) do if not g.completions[1].prompt then restored = restored + 1 end end
  t.eq(restored, 2 * 2 * 2, "turns 1 and 2 trained on from the store, with their prompts")

  local rows_a, metrics_a, n_a, updates_a = contents(clean .. name)
  local rows_b, metrics_b, n_b, updates_b = contents(broken .. name)
  t.eq(n_b, n_a)
  t.eq(n_b, 2 * 2 * 2 * 3)
  t.eq(updates_b, updates_a)
  t.eq(rows_b, rows_a, "the resumed run stored exactly what an uninterrupted one did")
  t.eq(metrics_b, metrics_a)
  local after = open(broken .. name)
  t.eq(after:get("open_step"), nil)
  after:close()
end)

t.test("the report: turns against single-turn over seeds, and per turn", function()
  local out = t.tmpdir()
  exp3.run(parse(with(E3, "--out=" .. out, "--steps=2", "--turns=1,2", "--seeds=2")), fakes.deps())
  local exp = results.load(out)
  t.eq(exp.kind, "experiment3")
  t.eq(#exp.configs, 4)
  local turns = turn_results.turns_table(exp)
  t.contains(turns, "| configuration | turns | kernels a step | mean reward | best GFLOPS |")
  t.contains(turns, "| lr=5e-07,opt=O3,turns=1 | 1 | 8 | ")
  t.contains(turns, "| (control) | (control) | 2 (1,2) |")
  local multi = turns:match("| lr=5e%-07,opt=O3,turns=2 | 2 | 8 |[^\n]*")
  t.ok(multi and multi:match("| [%+%-]%d+%.%d%d"), "paired differences from the control: " .. tostring(multi))
  local per_turn = turn_results.per_turn_table(exp)
  -- the kernels of a turn over both seeds: 2 steps x 2 prompts x 2 episodes x 2 seeds
  t.contains(per_turn, "| lr=5e-07,opt=O3,turns=2 | 1 | 16 | ")
  t.contains(per_turn, "| lr=5e-07,opt=O3,turns=2 | 2 | 16 | ")
  t.contains(per_turn, "| lr=5e-07,opt=O3,turns=1 | 1 | 32 | ")
  local said = turn_results.turns_text(exp)
  t.contains(said, "- `lr=5e-07,opt=O3,turns=2`: last turn - turn 1 mean reward ")
  t.contains(said, "against `lr=5e-07,opt=O3,turns=1` (2 paired seeds): mean reward ")
  local f = turn_results.turn_group_figures(exp, seed_results.groups(exp)[2])
  t.eq(f.control.name, "lr=5e-07,opt=O3,turns=1")
  t.eq(f.iv.vs_mean.n, 2)
  t.eq(turn_results.turns_table({kind = "experiment1", configs = {}}), nil, "other experiments: no such table")
end)

t.test("impossible options are refused, naming the option", function()
  local function refused(argv, text)
    local list = {[0] = "experiment3.lua", "--model=fake-model"}
    for _, a in ipairs(argv) do list[#list + 1] = a end
    local opts, err = args.try_parse(list, exp3.spec)
    t.eq(opts, nil, table.concat(argv, " "))
    t.contains(tostring(err), text)
  end
  refused({"--turns=0"}, "--turns: each value must be at least 1, got 0")
  refused({"--turns=1,0"}, "--turns: each value must be at least 1")
  refused({"--turns=1.5"}, "--turns expects an integer")
  refused({"--turns=3,3"}, "--turns: 3 is listed twice")
  refused({"--discount=1.5"}, "--discount must be at most 1, got 1.5")
  refused({"--discount=-0.1"}, "--discount must be at least 0")
  refused({"--turn_reward=best"}, "--turn_reward: 'best' is not one of: raw, improvement")
  refused({"--scale_rewards=turn"}, "--scale_rewards: 'turn' is not one of")
  refused({"--async=1"}, "--async: experiment3 runs a step's turns in order")
  local o = parse({"--out=x"})
  t.eq({o.turns, o.discount, o.turn_reward, o.scale_rewards, o.out}, {{1, 3}, 1.0, "raw", "none", "x"})
  t.eq(exp3.group_size(o, 1), o.G * 3, "the control: G x the largest --turns")
  t.eq(exp3.group_size(o, 3), o.G)
  local small = primitives.parse(exp3, "experiment3", {"--profile=small"})
  t.eq({small.turns, small.G, small.prompts_per_step}, {{1, 3}, 8, 2})
end)

t.test("the stand-in trainer takes advantages from every group or none, one number per completion", function()
  local pol = fakes.policy().load("m", {})
  local trainer = fakes.train().grpo(pol, {lr = 1e-3})
  local c = pol:sample({prompts.render(prompts.fixed({})[1])}, {n = 2, seed = 1})[1]
  local function group(adv) return {completions = {c[1], c[2]}, rewards = {1, 2}, advantages = adv} end
  t.raises(function() trainer:step{group({0.5, -0.5}), group(nil)} end, "1 of 2 groups give advantages")
  t.raises(function() trainer:step{group({0.5})} end, "one advantage per completion")
  t.raises(function() trainer:step{group({0.5, "x"})} end, "advantages are finite numbers")
  t.raises(function() trainer:step{{completions = {{text = "x"}}, rewards = {1}}} end, "needs the group's prompt")
  t.raises(function() trainer:step{{prompt = "other", completions = {c[1]}, rewards = {1}}} end,
           "not the prompt its completions were sampled from")
  trainer:step{group({0.5, -0.5})}
  trainer:step{group(nil)}
  t.eq(trainer.updates, 2)
end)

t.run()
