-- A small GRPO run for test_ranks.lua, started with or without --ranks:
--   engine [--ranks=N] ranks_job.lua OUT STEPS [fixed] [shapes] [resume] [kill-after=K] [device=D]
-- fixed: each step's completions are given as tables, the same batch whatever the ranks;
-- otherwise they are sampled (seed = step). Writes OUT/checkpoint after every step and,
-- at the end, OUT/logprobs.txt: what the trained policy says about one completion.
local out, steps = arg[1], tonumber(arg[2])
local opts = {}
for i = 3, #arg do opts[arg[i]:match("^[^=]+")] = arg[i]:match("=(.*)$") or true end

local pol = policy.load(engine.root .. "/tests/train/fixture/base", {device = opts.device or "cpu"})
local trainer = train.grpo(pol, {lr = 1e-2, micro_batch = 2, seed = 3})
local prompts = {{5, 6, 7}, {9, 10}}

local function fixed_groups()
  local groups = {}
  for p, prompt in ipairs(prompts) do
    local completions, rewards = {}, {}
    for i = 1, 4 do
      local tokens = {10 + i, 20 + p, 30 + i * p}
      completions[i] = {tokens = tokens, logprobs = pol:logprobs(prompt, tokens)}
      rewards[i] = i * p
    end
    groups[p] = {prompt = prompt, completions = completions, rewards = rewards}
  end
  return groups
end

local function sampled_groups(step)
  local sampled = pol:sample(prompts, {n = 4, max_tokens = 5, seed = step, ignore_eos = true})
  local groups = {}
  for p, completions in ipairs(sampled) do
    local rewards = {}
    for i, c in ipairs(completions) do rewards[i] = c.tokens[1] % 7 + i end
    groups[p] = {prompt = prompts[p], completions = completions, rewards = rewards}
  end
  return groups
end

-- This process's children that run the engine: the follower ranks.
local function followers()
  local pid = io.open("/proc/self/stat"):read("l"):match("^(%d+)")
  local list = io.open("/proc/" .. pid .. "/task/" .. pid .. "/children"):read("a")
  local found = {}
  for child in list:gmatch("%d+") do
    local comm = io.open("/proc/" .. child .. "/comm")
    if comm and comm:read("l") == "engine" then found[#found + 1] = child end
  end
  return found
end

if opts.shapes then
  local function tokens(groups)
    local all = {}
    for _, g in ipairs(groups) do
      for _, c in ipairs(g) do all[#all + 1] = table.concat(c.tokens, ",") end
    end
    return table.concat(all, ";")
  end
  local uneven = pol:sample(prompts, {n = 3, max_tokens = 4, seed = 7})
  assert(#uneven == 2 and #uneven[1] == 3 and #uneven[2] == 3, "n = 3: three per prompt")
  local again = pol:sample(prompts, {n = 3, max_tokens = 4, seed = 7})
  assert(tokens(uneven) == tokens(again), "the same seed samples the same completions")
  local dealt = pol:sample({{5}, {6}, {7}}, {n = 1, max_tokens = 4, seed = 7})
  assert(#dealt == 3 and #dealt[1] == 1 and #dealt[3] == 1, "n = 1: one per prompt")
  io.open(out .. "/shapes.txt", "w"):write(#followers(), " followers\n")
  return
end

local first = 1
if opts.resume then
  trainer:load(out .. "/checkpoint")
  first = trainer:steps() + 1
end
for step = first, steps do
  trainer:step(opts.fixed and fixed_groups() or sampled_groups(step))
  trainer:save(out .. "/checkpoint")
  if tonumber(opts["kill-after"]) == step then
    for _, pid in ipairs(followers()) do os.execute("kill -KILL " .. pid) end
  end
end
local f = assert(io.open(out .. "/logprobs.txt", "w"))
for _, lp in ipairs(pol:logprobs({5, 6, 7}, {11, 22, 33, 44})) do f:write(string.format("%.9g\n", lp)) end
f:close()
-- the job as rank 0 sees it: its processes, the benchmark workers among them, and whether
-- rank 1 (when there is one) trains
local workers = cluster.workers()
local rank1_works = false
for _, w in ipairs(workers) do rank1_works = rank1_works or w.rank == 1 end
io.open(out .. "/job.txt", "w"):write(string.format("%d processes, %d workers, rank 1 %s\n",
  cluster.size(), #workers, rank1_works and "evaluates" or "trains"))
