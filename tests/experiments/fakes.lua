-- Stand-ins for the engine's policy, bench and train primitives, with the same Lua
-- interfaces, so the experiments' plumbing can be tested without a model:
--   * the policy answers with canned kernels (the labelled ones in tests/data/kernels,
--     fenced, plus a few completions with no usable code), chosen by the seed; each
--     update of its trainer makes it pick faster kernels ("skill"), so learning and a
--     lost update both show in the samples;
--   * the bench reads each kernel's "/* expect: STATUS */" label (none: ok) and gives a GFLOPS
--     figure that grows with the techniques the label lists;
--   * the trainer checks the groups it is given (as the engine's: a `prompt` matching the
--     handles', completions as tables with the prompt, advantages in every group or none,
--     one number per completion), counts updates (the policy's skill),
--     and saves/loads that count as its checkpoint; completions carry the skill of the
--     policy that sampled them, so the trainer knows how stale each batch is;
--   * train.sft's trainer keeps the examples it is given, saves/loads its step count and
--     exports a model directory the stand-in policy loads with a skill of 1.

local fakes = {}

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local kernel_dir = here .. "/../data/kernels"

-- Canned completions: every labelled kernel, fenced, and three without usable code.
function fakes.completions()
  local out = {}
  local dir = kernel_dir
  for _, f in ipairs(sys.listdir(dir)) do
    if f:match("%.c$") then
      local code = assert(io.open(dir .. "/" .. f)):read("a")
      out[#out + 1] = "Here is the kernel:\n```c\n" .. code .. "```\n"
    end
  end
  out[#out + 1] = "I cannot write that kernel."
  out[#out + 1] = "```c\nint matmul_optimized(double *A, int M) { return 0; }\n```"
  out[#out + 1] = "```c\nvoid matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
  assert(#out >= 15, "the labelled kernels are missing from " .. dir)
  return out
end

-- The canned completions a prompt can get: the successful kernels whose labelled
-- techniques the prompt's stage allows (all of them for a prompt without a stage), and
-- the failing ones.
local function choices_for(prompt, canned)
  local s = tonumber(prompt:match("Stage (%d) of"))
  local allowed
  if s then
    local stages = require "method.stages"
    allowed = {}
    for _, tech in ipairs(stages.get(s).allowed) do allowed[tech] = true end
  end
  local good, bad = {}, {}
  local function speed(text) return select(2, (text:match("techniques:([%w_ ]+)") or ""):gsub("%w+", "")) end
  for _, text in ipairs(canned) do
    local techniques = text:match("techniques:%s*([%w_ ]+)")
    if not text:find("expect: ok", 1, true) then
      bad[#bad + 1] = text
    else
      local fits = true
      for tech in techniques:gmatch("[%w_]+") do
        if allowed and tech ~= "none" and not allowed[tech] then fits = false end
      end
      if fits then good[#good + 1] = text end
    end
  end
  table.sort(good, function(a, b)  -- slowest first: skill moves the choice up the list
    if speed(a) ~= speed(b) then return speed(a) < speed(b) end
    return a < b
  end)
  return good, bad
end

-- The skill a model directory starts with: 1 for one the SFT stand-in exported after
-- some steps, else 0 (any other directory, or none).
function fakes.exported_skill(dir)
  local file = dir .. "/config.json"
  if not sys.exists(file) then return 0 end
  local ok, config = pcall(json.read, file)
  return (ok and type(config) == "table" and (config.sft_steps or 0) > 0) and 1 or 0
end

-- policy.load(dir, opts) -> pol; pol:sample(prompts, {n =, seed =, ...})
function fakes.policy()
  local canned = fakes.completions()
  local policy = {loads = 0, samples = 0}
  function policy.load(dir, opts)
    assert(type(dir) == "string", "policy.load: the directory must be a string")
    policy.loads = policy.loads + 1
    local pol = {dir = dir, opts = opts, skill = fakes.exported_skill(dir)}
    function pol:sample(prompts, o)
      assert(type(prompts) == "table" and #prompts > 0, "pol:sample: prompts must be a list")
      assert(math.type(o.n) == "integer" and o.n > 0, "pol:sample: n must be a positive integer")
      policy.samples = policy.samples + 1
      local out = {}
      for p, prompt in ipairs(prompts) do
        assert(prompt:find("<|im_start|>assistant\n", 1, true), "the prompt is not in ChatML")
        -- odd samples succeed, even ones fail, each cycling through its list
        local good, bad = choices_for(prompt, canned)
        local base = (o.seed or 0) + 3 * p
        out[p] = {}
        for i = 1, o.n do
          local list = i % 2 == 1 and good or bad
          local k = (base + i // 2) % #list + 1
          if list == good then k = math.min(#good, k + self.skill) end
          out[p][i] = {text = list[k], tokens = {k, i}, logprobs = {-0.5, -0.25},
                       finish_reason = "stop", skill = self.skill, prompt = prompt}
        end
      end
      return out
    end
    return pol
  end
  return policy
end

-- policy.load(dir) -> pol whose completions cycle through `answers` (texts) for every
-- prompt, each prompt appended to `seen`: a task's tests answer with that task's kernels.
function fakes.answering_policy(answers, seen)
  return {load = function()
    return {sample = function(_, prompts, o)
      local out = {}
      for p, prompt in ipairs(prompts) do
        seen[#seen + 1] = prompt
        local these = type(answers) == "function" and answers(prompt) or answers
        out[p] = {}
        for i = 1, o.n do
          out[p][i] = {text = these[(i - 1) % #these + 1], tokens = {i}, logprobs = {-0.5},
                       finish_reason = "stop", skill = 0, prompt = prompt}
        end
      end
      return out
    end}
  end}
end

-- GFLOPS of a labelled kernel: 1 + 10 per technique its label names.
local function fake_gflops(code)
  local techniques = code:match("techniques:%s*([%w_ ]+)") or ""
  local n = 0
  for t in techniques:gmatch("[%w_]+") do if t ~= "none" then n = n + 1 end end
  return 1.0 + 10.0 * n
end

-- bench.batches: every batch evaluated, {sources =, opts =}, in order (what was timed together).
function fakes.bench()
  local bench = {calls = 0, kernels = 0, seen_opts = {}, batches = {}}
  function bench.evaluate_batch(sources, opts)
    bench.calls = bench.calls + 1
    bench.seen_opts[#bench.seen_opts + 1] = opts
    bench.batches[#bench.batches + 1] = {sources = table.move(sources, 1, #sources, 1, {}), opts = opts}
    local out = {}
    for i, code in ipairs(sources) do
      bench.kernels = bench.kernels + 1
      local status = code:match("expect:%s*([%a_]+)") or "ok"  -- unlabelled: the seed
      local r = {status = status, compile_ms = 5.0, backend = "fake"}
      if status == "ok" then
        r.gflops = fake_gflops(code)
        r.times = {0.01, 0.01, 0.01}
      else
        r.message = "fake " .. status
      end
      out[i] = r
    end
    return out
  end
  -- Evaluated at once, handed back at wait(): the order of submissions is what counts.
  function bench.submit_batch(sources, opts)
    bench.submits = (bench.submits or 0) + 1
    local results = bench.evaluate_batch(sources, opts)
    return {ready = function() return true end, wait = function() return results end}
  end
  function bench.machine()
    return {cores = 2, peak_gflops = 100.0, formula = "fake"}
  end
  function bench.reference(opts)
    bench.references = (bench.references or 0) + 1
    local t = 2.0 * opts.problem.M * opts.problem.N * opts.problem.K / 40e9  -- 40 GFLOPS
    return {status = "ok", gflops = 40.0, min = t * 0.9, median = t, times = {t, t, t},
            options = {threads = opts.threads or 2}}
  end
  return bench
end

function fakes.train()
  local train = {trainers = {}}
  function train.grpo(pol, opts)
    assert(pol and pol.sample, "train.grpo: needs a policy")
    assert(type(opts.lr) == "number" and opts.lr > 0, "train.grpo: lr must be positive")
    -- staleness[i]: updates between the sampling of update i's completions and update i;
    -- the policy's skill is the skill it was loaded with plus the updates
    local base_skill = pol.skill or 0
    local trainer = {updates = 0, groups = {}, opts = opts, policy = pol, staleness = {}}
    function trainer:step(groups)
      -- as the engine's trainer: every group of a step gives advantages, or none does
      local given = 0
      for _, g in ipairs(groups) do if g.advantages ~= nil then given = given + 1 end end
      assert(given == 0 or given == #groups, string.format("%d of %d groups give advantages: every "
                                                            .. "group gives them or none does", given, #groups))
      local skill  -- of the policy that sampled the first handle
      for _, g in ipairs(groups) do
        assert(type(g.completions) == "table" and #g.completions > 0, "a group has no completions")
        for _, c in ipairs(g.completions) do
          if c.prompt then
            -- as pol:sample's handles do, the completions carry their prompt: a `prompt`
            -- given too must be theirs
            assert(c.prompt == g.completions[1].prompt, "a group's completions answer one prompt")
            assert(g.prompt == nil or g.prompt == c.prompt,
                   "prompt is not the prompt its completions were sampled from")
            skill = skill or c.skill
          else
            -- a completion given as a table (a resumed run's): its tokens and log-probs,
            -- and the group's prompt
            assert(type(g.prompt) == "string", "a completion given as a table needs the group's prompt")
            assert(type(c.tokens) == "table" and type(c.logprobs) == "table" and #c.tokens == #c.logprobs,
                   "a completion given as a table needs its tokens and their logprobs")
          end
        end
        assert(#g.completions == #g.rewards, "one reward per completion")
        for _, r in ipairs(g.rewards) do assert(type(r) == "number", "rewards are numbers") end
        if g.advantages ~= nil then
          assert(type(g.advantages) == "table" and #g.advantages == #g.completions, "one advantage per completion")
          for _, a in ipairs(g.advantages) do
            assert(type(a) == "number" and a == a and math.abs(a) ~= math.huge, "advantages are finite numbers")
          end
        end
        for k in pairs(g) do
          assert(k == "prompt" or k == "completions" or k == "rewards" or k == "advantages",
                 "unexpected group field " .. k)
        end
        self.groups[#self.groups + 1] = g
      end
      self.staleness[#self.staleness + 1] = self.updates - ((skill or base_skill + self.updates) - base_skill)
      self.updates = self.updates + 1
      pol.skill = base_skill + self.updates
      return {loss = 1.0 / self.updates, kl = (opts.beta or 0) * self.updates, tokens = 2 * #groups,
              lr = opts.lr}
    end
    function trainer:save(dir)
      json.write(dir .. "/trainer.json", {updates = self.updates})
    end
    function trainer:load(dir)
      self.updates = json.read(dir .. "/trainer.json").updates
      pol.skill = base_skill + self.updates
    end
    train.trainers[#train.trainers + 1] = trainer
    return trainer
  end
  -- SFT: the options the engine's train.sft reads; steps of {prompt =, completion =} texts
  -- (all kept, in order); save/load the step count and learning rate; export writes a
  -- model directory (config.json) that policy.load takes. Its trainers are listed apart
  -- (train.sft_trainers), so train.trainers stays the GRPO ones.
  train.sft_trainers = {}
  local sft_options = {lr = true, weight_decay = true, eps = true, max_grad_norm = true, micro_batch = true,
                       grad_checkpoint = true, grad_checkpoint_layers = true, seed = true, betas = true, lora = true}
  function train.sft(pol, opts)
    assert(pol and pol.sample, "train.sft: needs a policy")
    for k in pairs(opts) do assert(sft_options[k], "train.sft: unknown option '" .. tostring(k) .. "'") end
    assert(type(opts.lr) == "number" and opts.lr > 0, "train.sft: lr must be positive")
    local trainer = {kind = "sft", opts = opts, policy = pol, examples = {}, batches = {}, done = 0, lr = opts.lr}
    function trainer:step(examples)
      assert(type(examples) == "table" and #examples > 0, "trainer:step: examples must be a non-empty list")
      for _, e in ipairs(examples) do
        assert(type(e.prompt) == "string" and type(e.completion) == "string",
               "trainer:step: an example is {prompt = text, completion = text}")
        for k in pairs(e) do assert(k == "prompt" or k == "completion", "unexpected example field " .. k) end
        self.examples[#self.examples + 1] = e
      end
      self.batches[#self.batches + 1] = #examples
      self.done = self.done + 1
      return {loss = 2.0 / (1 + self.done), lr = self.lr, tokens = 10 * #examples, grad_norm = 1.0,
              seconds = 0.001, step = self.done}
    end
    function trainer:steps() return self.done end
    function trainer:set_lr(lr) self.lr = lr end
    function trainer:save(dir) json.write(dir .. "/trainer.json", {steps = self.done, lr = self.lr}) end
    function trainer:load(dir)
      local saved = json.read(dir .. "/trainer.json")
      self.done, self.lr = saved.steps, saved.lr
    end
    function trainer:export(dir, o)
      sys.mkdir(dir)
      json.write(dir .. "/config.json", {model_type = "fake", base = pol.dir, sft_steps = self.done,
                                         dtype = o and o.dtype})
      self.exported = dir
    end
    train.sft_trainers[#train.sft_trainers + 1] = trainer
    return trainer
  end
  return train
end

-- The primitives for an experiment script's M.run(opts, deps).
-- A held-out comparison's seeds in heldout.lua --out's shape: per seed s of 1..n, one
-- prompt of the part "sizes" (matmul at 96^3) with two kernels per policy, the learned
-- policy's scoring 10 + s points (roofline and reward) above the base model's 10 and 20.
-- Returns the seeds and the per-seed gains.
function fakes.heldout_seeds(configuration, n)
  local seeds, gains = {}, {}
  for s = 1, n do
    local kernels = {}
    for i, score in ipairs{10, 20} do
      kernels[#kernels + 1] = {policy = "base", sample = i, status = "ok", reward = score, roofline = score}
      kernels[#kernels + 1] = {policy = "learned", sample = i, status = "ok", reward = score + 10 + s,
                               roofline = score + 10 + s}
    end
    local gain = {reward = 10 + s, ok = 0, roofline = 10 + s}
    seeds[s] = {seed = s, configuration = configuration, run = configuration .. ",seed=" .. s,
                prompts = {{part = "sizes", task = "matmul", size = "M = N = K = 96", kernels = kernels}},
                overall = {gain = gain}, parts = {sizes = {gain = gain}}}
    gains[s] = 10 + s
  end
  return seeds, gains
end

-- heldout.lua's audit of the runs' model (audit.model): a stand-in policy was pretrained on
-- nothing, so its corpus is clean (test_audit.lua runs the real audit).
function fakes.audit(dir)
  return {model = dir, status = "clean", stand_in = true}
end

function fakes.deps()
  return {policy = fakes.policy(), bench = fakes.bench(), train = fakes.train(), audit = fakes.audit}
end

return fakes
