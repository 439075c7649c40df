local t = require "engine.test"

local model = engine.root .. "/tests/train/fixture/base"

local function sample(pol, seed)
  return pol:sample({{5, 6, 7}, {9, 10}}, {n = 4, max_tokens = 5, seed = seed, ignore_eos = true})
end

local function groups_of(prompts, out)
  local groups = {}
  for p, completions in ipairs(out) do
    local rewards = {}
    for i, c in ipairs(completions) do rewards[i] = #c.tokens + i end
    groups[p] = {prompt = prompts[p], completions = completions, rewards = rewards}
  end
  return groups
end

t.test("a GRPO step returns the statistics people plot", function()
  local pol = policy.load(model)
  local trainer = train.grpo(pol, {lr = 1e-3, beta = 0.01, micro_batch = 3})
  local stats = trainer:step(groups_of({{5, 6, 7}, {9, 10}}, sample(pol, 1)))
  for _, k in ipairs{"loss", "reward_mean", "reward_std", "kl", "clip_fraction", "grad_norm",
                     "tokens", "seconds", "lr", "zero_variance_groups"} do
    t.ok(stats[k] ~= nil, "stats." .. k)
  end
  t.eq(stats.tokens, 40)
  t.eq(stats.step, 1)
  t.eq(trainer:steps(), 1)
  t.ok(stats.grad_norm > 0)
  t.contains(tostring(trainer), "trainer(grpo, step 1)")
end)

t.test("recomputing only the first blocks is an option, and the same step as keeping all", function()
  local prompts = {{5, 6, 7}, {9, 10}}
  local out = sample(policy.load(model), 3)
  local function loss_with(opts)
    local pol = policy.load(model)
    opts.lr, opts.micro_batch, opts.seed = 1e-3, 3, 7
    return train.grpo(pol, opts):step(groups_of(prompts, out)).loss
  end
  local kept = loss_with{}
  t.near(loss_with{grad_checkpoint = true, grad_checkpoint_layers = 1}, kept, 1e-6)
  t.near(loss_with{grad_checkpoint = true}, kept, 1e-6)
  t.raises(function() train.grpo(policy.load(model), {grad_checkpoint_layers = -1}) end,
           "grad_checkpoint_layers must not be negative")
end)

t.test("trainer:step takes the sampled handles as they are, with or without the prompt", function()
  -- the same update from handles (ids never leave C++), from handles without the prompt,
  -- and from the tables a script could build: equal weights after each
  local function updated(make_groups)
    local pol = policy.load(model)
    local trainer = train.grpo(pol, {lr = 1e-2})
    local stats = trainer:step(make_groups(pol))
    return stats, pol:logprobs({5, 6, 7}, {8, 9})
  end
  local prompts = {{5, 6, 7}, {9, 10}}
  local a, lp_a = updated(function(pol) return groups_of(prompts, sample(pol, 4)) end)
  local b, lp_b = updated(function(pol)
    local groups = groups_of(prompts, sample(pol, 4))
    for _, g in ipairs(groups) do g.prompt = nil end
    return groups
  end)
  local c, lp_c = updated(function(pol)
    local groups = groups_of(prompts, sample(pol, 4))
    for _, g in ipairs(groups) do
      for i, h in ipairs(g.completions) do
        g.completions[i] = {tokens = h.tokens, logprobs = h.logprobs, finish_reason = h.finish_reason}
      end
    end
    return groups
  end)
  t.eq({b.tokens, c.tokens}, {a.tokens, a.tokens})
  for i = 1, 2 do
    t.near(lp_b[i], lp_a[i], 1e-6)
    t.near(lp_c[i], lp_a[i], 1e-6)
  end
  t.ok(a.grad_norm > 0)
end)

t.test("a group's prompt must be the one its handles were sampled from", function()
  local pol = policy.load(model)
  local trainer = train.grpo(pol, {lr = 1e-3})
  local out = sample(pol, 5)
  t.raises(function()
    trainer:step{{prompt = {9, 10}, completions = out[1], rewards = {1, 2, 3, 4}}}
  end, "groups[1].prompt is not the prompt its completions were sampled from")
  t.raises(function()
    trainer:step{{completions = {out[1][1], out[2][1]}, rewards = {1, 2}}}
  end, "groups[1].completions were sampled from different prompts")
  t.raises(function()
    trainer:step{{completions = {out[1][1], {tokens = {1}, logprobs = {-1}}}, rewards = {1, 2}}}
  end, "groups[1].prompt")
  t.eq(trainer:steps(), 0)
end)

-- One GRPO step of the fixture on two sampled groups; with_advantages(groups) may give them
-- advantages of its own. Returns the step's statistics and the updated policy's log-probs.
local function step_with(with_advantages)
  local pol = policy.load(model)
  local trainer = train.grpo(pol, {lr = 1e-2})
  local groups = groups_of({{5, 6, 7}, {9, 10}}, sample(pol, 4))
  if with_advantages then with_advantages(groups) end
  local stats = trainer:step(groups)
  return stats, pol:logprobs({5, 6, 7}, {8, 9})
end

t.test("given advantages replace the group's and must come with every group", function()
  -- the group-normalised advantages passed by hand give the same update as the trainer's own
  local own, lp_own = step_with(nil)
  local given, lp_given = step_with(function(groups)
    for _, g in ipairs(groups) do
      local mean, ss = 0, 0
      for _, r in ipairs(g.rewards) do mean = mean + r / #g.rewards end
      for _, r in ipairs(g.rewards) do ss = ss + (r - mean) ^ 2 end
      local std = math.sqrt(ss / (#g.rewards - 1))
      g.advantages = {}
      for i, r in ipairs(g.rewards) do g.advantages[i] = (r - mean) / (std + 1e-4) end
    end
  end)
  t.near(given.grad_norm, own.grad_norm, 1e-6 * own.grad_norm)
  for i = 1, 2 do t.near(lp_given[i], lp_own[i], 1e-6) end
  -- a group of one, which has no group statistic, still moves the policy
  local pol = policy.load(model)
  local trainer = train.grpo(pol, {lr = 1e-2})
  local out = sample(pol, 5)
  local stats = trainer:step{{prompt = {5, 6, 7}, completions = {out[1][1]}, rewards = {3}, advantages = {1.5}}}
  t.ok(stats.grad_norm > 0, "a given advantage on a group of one gives a gradient")
  t.raises(function()
    trainer:step{{prompt = {5, 6, 7}, completions = {out[1][2]}, rewards = {3}, advantages = {1}},
                 {prompt = {9, 10}, completions = {out[2][1]}, rewards = {1}}}
  end, "1 of 2 groups give advantages")
  t.raises(function()
    trainer:step{{prompt = {5, 6, 7}, completions = {out[1][3]}, rewards = {3}, advantages = {1, 2}}}
  end, "2 advantages for 1 completions")
  t.raises(function()
    trainer:step{{prompt = {5, 6, 7}, completions = {out[1][4]}, rewards = {3}, advantages = {"x"}}}
  end, "advantages")
end)

t.test("train.advantages is the trainer's own arithmetic, with a leave-one-out baseline beside it", function()
  -- the trainer's group advantages, asked for and given back, make the same update
  local own, lp_own = step_with(nil)
  local given, lp_given = step_with(function(groups)
    local rewards = {}
    for g, group in ipairs(groups) do rewards[g] = group.rewards end
    for g, a in ipairs(train.advantages(rewards, {scale = "group"})) do groups[g].advantages = a end
  end)
  -- (to a rounding: the two steps' threaded reductions may add in another order)
  t.near(given.grad_norm, own.grad_norm, 1e-9 * own.grad_norm)
  for i = 1, 2 do t.near(lp_given[i], lp_own[i], 1e-9) end
  -- by hand: mean baseline (a flat group is 0), leave-one-out, and the scalings
  local a = train.advantages({{1, 2, 3}, {5, 5}})
  t.near(a[1][1], -1 / (1 + 1e-4), 1e-15)
  t.eq(a[1][2], 0.0)
  t.eq(a[2], {0.0, 0.0})
  t.eq(train.advantages({{1, 2, 3}}, {scale = "none", baseline = "leave_one_out"})[1], {-1.5, 0.0, 1.5})
  t.eq(train.advantages({{7}}, {baseline = "leave_one_out"})[1], {0.0})
  local batch = train.advantages({{0, 2}, {4, 4}}, {scale = "batch", eps = 0})
  local s = math.sqrt(((0 - 2.5) ^ 2 + (2 - 2.5) ^ 2 + 2 * (4 - 2.5) ^ 2) / 3)
  t.near(batch[1][2], 1 / s, 1e-15)
  t.raises(function() train.advantages({{1, 0 / 0}}) end, "groups[1][2]: the reward is not a finite number")
  t.raises(function() train.advantages({1, 2}) end, "train.advantages: groups[1] must be a list")
  t.raises(function() train.advantages({{1}}, {baseline = "median"}) end, "baseline")
  t.raises(function() train.advantages({{}}) end, "no completions")
  -- the trainer refuses a reward that is not a number it can rank, by the same check
  t.raises(function() step_with(function(groups) groups[2].rewards[3] = 0 / 0 end) end,
           "groups[2][3]: the reward is not a finite number")
end)

t.test("the trainer keeps its policy alive", function()
  local trainer = train.grpo(policy.load(model), {lr = 1e-3, lora = {r = 2, alpha = 4}})
  collectgarbage()
  collectgarbage()
  local pol = policy.load(model)
  local stats = trainer:step(groups_of({{5, 6, 7}, {9, 10}}, sample(pol, 2)))
  t.eq(stats.step, 1)
end)

t.test("bad options and malformed groups are named", function()
  local pol = policy.load(model)
  t.raises(function() train.grpo(pol, {lr = 1e-3, betaa = 0}) end, "unknown option 'betaa'")
  t.raises(function() train.grpo(pol, {loss = "ppo"}) end, "expected one of")
  t.raises(function() train.grpo(pol, {lora = {rank = 4}}) end, "unknown option 'rank'")
  t.raises(function() train.grpo("pol", {}) end, "must be a engine.policy.Policy")
  local trainer = train.grpo(pol, {lr = 1e-3})
  t.raises(function()
    trainer:step{{prompt = {5, 6}, completions = {{tokens = {1, 2}}}, rewards = {1}}}
  end, "without per-token logprobs")
  t.raises(function()
    trainer:step{{prompt = {5, 6}, completions = {{tokens = {1, 2}, logprobs = {-1, -1}}}, rewards = {}}}
  end, "1 completions but 0 rewards")
  t.raises(function() trainer:step{{prompt = "text", completions = {}, rewards = {}}} end,
           "no tokenizer")
end)

-- Rows cut by a token budget (sorted by length, so little padding) are the same SFT step
-- as rows cut by count: the loss and gradient are token-weighted sums either way.
t.test("an SFT step cut by a token budget is the step cut by rows", function()
  local examples = {{prompt = {5, 6, 7}, completion = {8, 9, 2}}, {prompt = {3}, completion = {4, 2}},
                    {prompt = {5, 6, 7, 8, 9, 10}, completion = {11, 12, 13, 14, 2}},
                    {prompt = {4}, completion = {2}}, {prompt = {9, 10}, completion = {3, 4, 5, 2}}}
  local by_rows = train.sft(policy.load(model), {lr = 1e-2, micro_batch = 2}):step(examples)
  local by_tokens = train.sft(policy.load(model), {lr = 1e-2, micro_tokens = 12}):step(examples)
  local whole = train.sft(policy.load(model), {lr = 1e-2, micro_batch = 5}):step(examples)
  t.near(by_tokens.loss, whole.loss, 1e-6 * whole.loss)
  t.near(by_rows.loss, whole.loss, 1e-6 * whole.loss)
  t.near(by_tokens.grad_norm, whole.grad_norm, 1e-5 * whole.grad_norm)
  t.eq(by_tokens.tokens, whole.tokens)
  -- a budget smaller than the longest row still runs that row alone
  local tight = train.sft(policy.load(model), {lr = 1e-2, micro_tokens = 1}):step(examples)
  t.near(tight.loss, whole.loss, 1e-6 * whole.loss)
  -- cut where the least padding is computed: the same step again
  local least = train.sft(policy.load(model), {lr = 1e-2, micro_tokens = 12, least_padding = true}):step(examples)
  t.near(least.loss, whole.loss, 1e-6 * whole.loss)
  t.near(least.grad_norm, whole.grad_norm, 1e-5 * whole.grad_norm)
  t.raises(function() train.sft(policy.load(model), {least_padding = "yes"}) end, "least_padding")
  -- the cuts themselves, as the trainer makes them: one long row alone, then the rest
  t.eq(train.micro_cuts({100, 90, 50, 40, 10}, 200), {2, 3})
  local lengths = {1500}
  for i = 1, 63 do lengths[#lengths + 1] = 600 - 5 * i end
  t.eq(train.micro_cuts(lengths, 65536, true)[1], 1)
  t.eq(train.micro_cuts(lengths, 65536)[1], 43)
  t.raises(function() train.micro_cuts({10, 20}, 100) end, "longest first")
  t.raises(function() train.micro_cuts({10}, 0) end, "budget")
  t.raises(function() train.sft(policy.load(model), {micro_tokens = "many"}) end, "micro_tokens")
  t.raises(function() train.grpo(policy.load(model), {micro_tokens = 64}) end, "micro_tokens is an SFT option")
end)

t.test("checkpoints save, load and export", function()
  local dir = t.tmpdir()
  local pol = policy.load(model)
  local sft = train.sft(pol, {lr = 1e-2, micro_batch = 2})
  local stats = sft:step{{prompt = {5, 6, 7}, completion = {8, 9, 2}}, {prompt = {3}, completion = {4, 2}}}
  t.ok(stats.loss > 0)
  sft:save(dir .. "/ckpt")
  local again = train.sft(policy.load(model), {lr = 1e-2})
  again:load(dir .. "/ckpt")
  t.eq(again:steps(), 1)
  sft:export(dir .. "/hf")
  t.ok(sys.exists(dir .. "/hf/model.safetensors"))
  t.ok(sys.exists(dir .. "/hf/config.json"))
  t.raises(function() sft:export(dir .. "/peft", {adapter = true}) end, "needs a LoRA trainer")
  local reloaded = policy.load(dir .. "/hf")
  local a = pol:logprobs({5, 6, 7}, {8, 9})
  local b = reloaded:logprobs({5, 6, 7}, {8, 9})
  t.near(a[1], b[1], 1e-5)
end)

-- A damaged checkpoint is a one-line error that names it (libtorch's own errors carry a
-- C++ backtrace of many lines).
t.test("a malformed checkpoint is a one-line error naming it", function()
  local dir = t.tmpdir()
  local sft = train.sft(policy.load(model), {lr = 1e-2})
  sft:save(dir .. "/ckpt")
  local function refused(what, text)
    local ok, err = pcall(sft.load, sft, dir .. "/ckpt")
    t.ok(not ok, what .. " was loaded")
    t.contains(tostring(err), text)
    t.ok(not tostring(err):find("\n"), what .. ": one line: " .. tostring(err))
  end
  local function write(name, bytes)
    local f = assert(io.open(dir .. "/ckpt/" .. name, "wb"))
    f:write(bytes)
    f:close()
  end
  write("optimizer.pt", "not a torch archive")
  refused("a garbage optimizer.pt", "cannot load the checkpoint " .. dir .. "/ckpt")
  write("weights.safetensors", "\0\0")
  refused("truncated weights", "weights.safetensors")
  write("trainer.json", "{not json")
  refused("a corrupt trainer.json", "corrupt " .. dir .. "/ckpt/trainer.json")
  os.remove(dir .. "/ckpt/trainer.json")
  refused("a directory without the trainer's state", "no trainer state in")
end)

t.test("exports store the asked dtype and name it in the config", function()
  local dir = t.tmpdir()
  local pol = policy.load(model)
  local sft = train.sft(pol, {lr = 1e-2})
  sft:export(dir .. "/fp32")
  sft:export(dir .. "/bf16", {dtype = "bf16"})
  t.eq(json.read(dir .. "/bf16/config.json").torch_dtype, "bfloat16")
  local full, half = #t.read(dir .. "/fp32/model.safetensors"), #t.read(dir .. "/bf16/model.safetensors")
  t.ok(half < 0.6 * full, "bf16 file is about half the fp32 one")
  local a = pol:logprobs({5, 6, 7}, {8, 9})
  local b = policy.load(dir .. "/bf16"):logprobs({5, 6, 7}, {8, 9})
  t.near(a[1], b[1], 0.05)
  t.raises(function() sft:export(dir .. "/x", {dtype = "int8"}) end, "dtype")
end)

t.test("set_lr changes the step size of the following steps", function()
  local examples = {{prompt = {5, 6, 7}, completion = {8, 9, 2}}}
  local function moved(lr)
    local pol = policy.load(model)
    local sft = train.sft(pol, {lr = 1e-2})
    sft:set_lr(lr)
    local before = pol:logprobs({5, 6, 7}, {8, 9})[1]
    local stats = sft:step(examples)
    t.near(stats.lr, lr, 1e-12)
    return pol:logprobs({5, 6, 7}, {8, 9})[1] - before
  end
  t.eq(moved(0), 0)
  t.ok(moved(1e-2) > 0, "a positive lr raises the completion's log-prob")
  t.raises(function() train.sft(policy.load(model), {lr = 1e-2}):set_lr(-1) end, "negative")
end)

t.run()
