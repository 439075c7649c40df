-- The paper's step on one GPU against several (engine --ranks=N, one GPU a rank): sampling
-- 8 prompts x G = 64 completions of up to 1,024 tokens, then one GRPO update (LoRA r 32)
-- of that batch, with a model of a real checkpoint's shape and random weights. Each rank
-- count runs as its own `engine --ranks=N` process of this script, one after the other
-- on the same machine; the summary prints each figure's ratio to one rank's.
--
--   build/engine perf/policy/ranks_bench.lua [--gpus=1,2] [--rows=256] [--config=perf/policy/configs/qwen2.5-coder-14b.json]
--                                            [--prompts=8] [--G=64] [--tokens=1024] [--prompt_len=128]
local args = require "engine.args"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Sampling and the GRPO update of the paper's step, one GPU against N",
  options = {
    {"gpus", "1,2", "GPU counts to run, one rank each (the first is the baseline)"},
    {"config", engine.root .. "/perf/policy/configs/qwen2.5-coder-14b.json", "the model's config.json"},
    {"prompts", 8, "distinct prompts", min = 1},
    perf.G(64),
    {"tokens", 1024, "tokens a completion (no stop token ends one early)", min = 1},
    {"prompt_len", 128, "tokens a prompt", min = 1},
    {"micro_batch", 8, "completions per forward/backward of the update", min = 1},
    {"lora", 32, "the adapters' rank", min = 1},
    {"rows", 256, "rows a GPU samples at once: each call takes as many whole prompts as "
     .. "fill every rank's rows (one H200 holds 256 rows of the 14B config's cache at 1,152 "
     .. "tokens beside its weights, not 512)", min = 1},
    {"child", "", "(internal) run one rank count's measurement and write its figures here"},
    {"child_ranks", 1, "(internal) the ranks of the child's job", min = 1},
  },
})

-- One rank count's figures, measured in this process (rank 0 of `engine --ranks=N`).
local function measure()
  local dir = os.tmpname()
  os.remove(dir)
  sys.mkdir(dir)
  os.execute(string.format("cp %q %q", opts.config, dir .. "/config.json"))
  local pol = policy.load(dir, {device = "cuda", dtype = "bf16", random_weights = 1})
  local vocab = pol:info().vocab_size
  local prompts = {}
  for p = 1, opts.prompts do
    local ids = {}
    for i = 1, opts.prompt_len do ids[i] = (p * 7919 + i * 104729) % vocab end
    prompts[p] = ids
  end
  -- cuBLAS handles, workspaces and the first graphs, outside the measurement.
  pol:sample({prompts[1]}, {n = 2 * opts.child_ranks, max_tokens = 8, seed = 1, ignore_eos = true})
  local per_call = math.max(1, opts.rows * opts.child_ranks // opts.G)
  local groups, calls = {}, 0
  local t0 = sys.now()
  for first = 1, #prompts, per_call do
    local part = table.move(prompts, first, math.min(first + per_call - 1, #prompts), 1, {})
    local sampled = pol:sample(part, {n = opts.G, max_tokens = opts.tokens, seed = 2 + first, ignore_eos = true})
    table.move(sampled, 1, #sampled, #groups + 1, groups)
    calls = calls + 1
  end
  local sample_s = sys.now() - t0
  local batch, tokens = {}, 0
  for g, group in ipairs(groups) do
    local rewards = {}
    for i, c in ipairs(group) do
      tokens = tokens + #c.tokens
      rewards[i] = (i * 7919 + g) % 13
    end
    batch[g] = {completions = group, rewards = rewards}
  end
  local trainer = train.grpo(pol, {lr = 1e-5, micro_batch = opts.micro_batch, grad_checkpoint = true,
                                   lora = {r = opts.lora, alpha = 2 * opts.lora, dropout = 0.0}})
  t0 = sys.now()
  local st = trainer:step(batch)
  local update_s = sys.now() - t0
  os.execute(string.format("rm -rf %q", dir))
  return {ranks = opts.child_ranks, calls = calls, sample_s = sample_s, tokens = tokens, update_s = update_s,
          loss = st.loss, completions = opts.prompts * opts.G}
end

if opts.child ~= "" then
  json.write(opts.child, measure())
  return
end

local counts = {}
for r in opts.gpus:gmatch("%d+") do counts[#counts + 1] = tonumber(r) end
assert(#counts > 0, "--gpus: no count in '" .. opts.gpus .. "'")
local rows = {}
for _, r in ipairs(counts) do
  local out = os.tmpname()
  local passed = {}
  for _, k in ipairs({"config", "prompts", "G", "tokens", "prompt_len", "micro_batch", "lora", "rows"}) do
    passed[#passed + 1] = string.format("--%s=%s", k, tostring(opts[k]))
  end
  local cmd = string.format("%q --ranks=%d %q %s --child=%q --child_ranks=%d 2>&1", arg[-1], r,
                            debug.getinfo(1, "S").source:sub(2), table.concat(passed, " "), out, r)
  local p = io.popen(cmd)
  local text = p:read("a")
  if not p:close() then error(string.format("--ranks=%d failed:\n%s", r, text)) end
  rows[#rows + 1] = json.read(out)
  os.remove(out)
end

local base = rows[1]
print(string.format("%d prompts x G = %d, %d tokens each, config %s, LoRA r %d, micro-batch %d",
                    opts.prompts, opts.G, opts.tokens, opts.config, opts.lora, opts.micro_batch))
print("| GPUs | sampling calls | sampling s | tokens/s | x one | update s | tokens/s | x one | loss |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for _, r in ipairs(rows) do
  print(string.format("| %d | %d | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f | %.4f |", r.ranks, r.calls, r.sample_s,
                      r.tokens / r.sample_s, base.sample_s / r.sample_s, r.update_s,
                      r.tokens / r.update_s, base.update_s / r.update_s, r.loss))
end
print("json " .. json.encode(rows))
