-- Sampling and a GRPO step of the default model on the CPU, with the threads policy.load
-- gives libtorch by default against all cores (the earlier default), in alternating rounds
-- of one process: the main job's sampling (the two fixed prompts x 16, 512 tokens at most)
-- and one update over those 32 completions.
--
--   build/engine perf/policy/cpu_threads.lua [--rounds=3] [--model=models/small]
local args = require "engine.args"
local prompts = require "method.prompts"

local opts = args.parse(arg, {
  description = "CPU threads of the policy: default against all cores",
  options = {
    {"rounds", 3, "alternating rounds (each samples with a seed of its own)", min = 1},
    {"model", engine.root .. "/models/small", "checkpoint directory"},
    {"n", 16, "completions per prompt", min = 1},
    {"max_tokens", 512, "longest completion", min = 1},
  },
})

local fixed = prompts.fixed({M = 128, N = 128, K = 128, isa = "avx512"})
local texts = {prompts.render(fixed[1]), prompts.render(fixed[2])}

-- One round with `threads`: seconds of sampling, decode steps, tokens, seconds of a step.
local function round(threads, seed)
  local pol = policy.load(opts.model, {threads = threads})
  local t0 = sys.now()
  local out = pol:sample(texts, {n = opts.n, max_tokens = opts.max_tokens, seed = seed})
  local sample_s = sys.now() - t0
  local tokens, steps, groups = 0, 0, {}
  for g, group in ipairs(out) do
    local rewards = {}
    for i, c in ipairs(group) do
      local len = #c.tokens
      tokens, steps = tokens + len, math.max(steps, len)
      rewards[i] = (i * 7919) % 13
    end
    groups[g] = {completions = group, rewards = rewards}
  end
  local trainer = train.grpo(pol, {lr = 3e-4})
  t0 = sys.now()
  trainer:step(groups)
  return {sample_s = sample_s, steps = steps, tokens = tokens, step_s = sys.now() - t0}
end

local median = require("core.stats").median

local configs = {{name = "default", threads = policy.default_threads()},
                 {name = "all cores", threads = sys.cpu_count()}}
print(string.format("cores %d, default threads %d", sys.cpu_count(), policy.default_threads()))
local ms_per_step, tok_s, update_s = {}, {}, {}
for _, c in ipairs(configs) do ms_per_step[c.name], tok_s[c.name], update_s[c.name] = {}, {}, {} end
for r = 1, opts.rounds do
  for _, c in ipairs(configs) do
    local m = round(c.threads, r)
    table.insert(ms_per_step[c.name], 1000 * m.sample_s / m.steps)
    table.insert(tok_s[c.name], m.tokens / m.sample_s)
    table.insert(update_s[c.name], m.step_s)
    print(string.format("round %d  %-9s threads %2d: %5d tokens in %5.2f s (%5.1f ms a decode step, %4d steps), update %.2f s",
                        r, c.name, c.threads, m.tokens, m.sample_s, 1000 * m.sample_s / m.steps, m.steps, m.step_s))
  end
end
local a, b = configs[1].name, configs[2].name
print(string.format("median ms a decode step: %s %.1f, %s %.1f (%.2fx)", a, median(ms_per_step[a]), b,
                    median(ms_per_step[b]), median(ms_per_step[b]) / median(ms_per_step[a])))
print(string.format("median tokens/s: %s %.0f, %s %.0f", a, median(tok_s[a]), b, median(tok_s[b])))
print(string.format("median GRPO step s: %s %.2f, %s %.2f (%.2fx)", a, median(update_s[a]), b,
                    median(update_s[b]), median(update_s[b]) / median(update_s[a])))
