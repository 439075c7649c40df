-- The experiments' command line: the options both have (each adds its own and its sweep
-- axes), the checks of single values that engine.args runs, --seeds, and parsing, which
-- applies the small profile when no --model is given and refuses what the machine cannot
-- do (checks.lua) before anything is made.
--
--   M.spec = options.spec{description = ..., options = {...}, profiles = {...}}
--   local opts = options.parse(argv, M.spec)

local args = require "engine.args"
local checks = require "run.checks"
local cli = require "core.cli"
local reward = require "method.reward"
local wiring = require "method.wiring"

local options = {}

-- --device: auto (CUDA when this engine sees a GPU, else the CPU), cpu, cuda or cuda:N.
function options.check_device(v)
  if v == "auto" or v == "cpu" or v == "cuda" or v:match("^cuda:%d+$") then return true end
  return nil, "expected auto, cpu, cuda or cuda:N, got '" .. v .. "'"
end

-- --reward: a scheme of reward.lua (checked when the options are parsed).
function options.check_reward(v)
  if reward.schemes[v] then return true end
  local names = {}
  for k in pairs(reward.schemes) do names[#names + 1] = k end
  table.sort(names)
  return nil, "no reward scheme '" .. v .. "' (have: " .. table.concat(names, ", ") .. ")"
end

-- --seeds: "" (none: --seed alone), a count "N" (seeds 1..N) or a list "4,7,9" of distinct
-- integers and ranges "5-8" (inclusive; "4-4" is seed 4 alone, where "4" would be a
-- count). Returns the list of seeds (nil for ""), or nil and why the text is not one.
function options.parse_seeds(text)
  if text == nil or text == "" then return nil end
  if text:match("^%s*%d+%s*$") then
    local n = math.tointeger(tonumber(text))
    if n < 1 then return nil, "a count of seeds must be at least 1, got '" .. text .. "'" end
    if n > 1000 then return nil, "at most 1000 seeds, got '" .. text .. "'" end
    local seeds = {}
    for i = 1, n do seeds[i] = i end
    return seeds
  end
  local seeds, seen = {}, {}
  local bad = "expected a count N or a list of integer seeds and ranges like 1,2,3 or 5-8, got '" .. text .. "'"
  for item in (text .. ","):gmatch("([^,]*),") do
    item = item:match("^%s*(.-)%s*$")
    local lo, hi = item:match("^(%d+)%s*%-%s*(%d+)$")
    lo, hi = math.tointeger(tonumber(lo or item)), math.tointeger(tonumber(hi or item))
    if not (lo and hi) then return nil, bad end
    if hi < lo then return nil, "the range " .. item .. " runs backwards in '" .. text .. "'" end
    for s = lo, hi do
      if seen[s] then return nil, "seed " .. s .. " is listed twice in '" .. text .. "'" end
      if #seeds >= 1000 then return nil, "at most 1000 seeds, got '" .. text .. "'" end
      seen[s] = true
      seeds[#seeds + 1] = s
    end
  end
  if #seeds == 0 then return nil, "no seed in '" .. text .. "'" end
  return seeds
end

-- --seeds as engine.args checks a value: "" (none) or what parse_seeds reads.
function options.check_seeds(v)
  local seeds, why = options.parse_seeds(v)
  if seeds or v == "" then return true end
  return nil, why
end

-- How every call's output is checked (bench's verify): one spec for every script.
options.verify_option = {"verify", "fp64", "verification of every call: fp64 (every element, "
  .. "double-precision error bound) or paper (the paper's 105 points, relative error 1e-6)",
  choices = {"fp64", "paper"}}

-- Options every experiment has; each experiment adds its own and its sweep axes.
-- Defaults are the paper's values where it gives them. min/above/max/check (engine.args)
-- refuse impossible values before anything is created.
options.shared = {
  {"out", nil, "run directory (one subdirectory per configuration)", type = "string"},
  {"configs", "", "which configurations to run: indices '1,4' or conditions 'opt=O3,lr=5e-7'"},
  {"resume", false, "continue the runs in --out where they stopped"},
  {"model", nil, "policy checkpoint directory, Hugging Face format [default: "
   .. wiring.default_model .. ", with the small profile; for a CUDA task " .. wiring.default_cuda_model .. "]",
   type = "string"},
  {"device", "auto", "where the policy runs: auto (CUDA when present, else cpu), cpu, cuda, "
   .. "cuda:N", check = options.check_device},
  {"dtype", "fp32", "policy weights: fp32, bf16, fp16", choices = {"fp32", "bf16", "fp16"}},
  {"G", 64, "completions per prompt (the group size)", min = 1},
  {"temperature", 1.0, "sampling temperature", min = 0},
  {"top_p", 1.0, "nucleus sampling threshold", above = 0, max = 1},
  {"max_tokens", 2048, "longest completion in tokens", min = 1},
  {"task", "matmul", "the task of the suite the model writes kernels for (bench.tasks(), "
   .. "docs/tasks.md): matmul is the paper's; cuda:NAME a CUDA task (stdlib/cuda_tasks, "
   .. "experiment1 only, on a machine with a GPU)"},
  {"task_size", "", "the named size of --task (its spec's sizes; empty: train); --size is matmul's"},
  {"cuda_child", "warm", "a CUDA task's judge: warm (the evaluation process's warm child, one context for "
   .. "many kernels; the same verdicts, docs/tasks.md) or fresh (a child and a context per kernel)",
   choices = {"fresh", "warm"}},
  {"task_dir", "", "a folder of task specs added to the suite's (a spec there replaces the "
   .. "suite's of the same name)"},
  {"tasks", "", "a mixture instead of --task: 'train' (every training task) or a list "
   .. "'axpy,dot,matmul'; each group's prompt is one task's, and a kernel's speed counts as a "
   .. "percentage of its task's roofline (the measured bandwidth or FP64 peak), so that no "
   .. "task's units drown the others' (empty: --task alone)"},
  {"size", 256, "matrix size of matmul: M = N = K", min = 1},
  {"timeout", 8.0, "seconds a kernel may run before it is a timeout", above = 0},
  {"warmup", 1, "untimed runs before timing", min = 0},
  {"runs", 3, "timed runs (the fastest gives the GFLOPS)", min = 1},
  {"max_runs", 10, "more timed runs, up to this many, while their CoV is above --cov_target "
   .. "(at most --runs: exactly --runs, as in the paper)", min = 1},
  {"cov_target", 0.05, "the spread of timed runs (CoV) below which no more are made", min = 0},
  {"threads", 0, "threads per kernel (0: all cores)", min = 0},
  options.verify_option,
  {"clip", 0.2, "GRPO clipping range (delta)", above = 0},
  {"loss", "grpo", "GRPO loss normalisation (grpo: per sequence, as in the paper)",
   choices = {"grpo", "bnpo", "dr_grpo", "dapo"}},
  {"scale_rewards", "group", "what divides a completion's reward minus its group's mean: group "
   .. "(its group's std, the paper's GRPO), batch (the std over the update's groups: a group "
   .. "whose kernels differ by timing noise moves the policy little), none (Dr. GRPO)",
   choices = {"group", "batch", "none"}},
  {"num_iterations", 1, "optimisation passes over each batch", min = 1},
  {"micro_batch", 0, "completions per forward/backward pass (0: the trainer's default)", min = 0},
  {"lora_r", 0, "LoRA rank (0: full fine-tuning)", min = 0},
  {"lora_alpha", 64.0, "LoRA alpha (with --lora_r)", above = 0},
  {"lora_dropout", 0.1, "LoRA dropout (with --lora_r)", min = 0, max = 0.99},
  {"detector", "", "stage technique detector for all stages: regex, features, auto "
   .. "(empty: each stage's own)", check = function(v)
     if v == "" or v == "regex" or v == "features" or v == "auto" then return true end
     return nil, "expected regex, features or auto, got '" .. v .. "'"
   end},
  {"template", "chatml", "prompt format: chatml (Qwen2/2.5), or model (the policy's own "
   .. "pol:chat(messages))", choices = {"chatml", "model"}},
  {"prefill", false, "begin every answer with a fence, the usual headers and the task's prototype "
   .. "line ('void NAME(...) {'): the policy writes the body, the judge reads both, the update "
   .. "scores only the policy's tokens (CPU tasks; not the paper's prompts)"},
  {"seed", 1, "seed of sampling and of SQD's random choices (one run per configuration)"},
  {"seeds", "", "run every configuration once per seed: a list '1,2,3' or range '5-8', or a count N "
   .. "(seeds 1..N); several seeds add ',seed=S' to each run's directory name (empty: --seed)",
   check = options.check_seeds},
  {"isa", "auto", "vector ISA the prompts ask for: auto (the machine's, bench.machine().simd), "
   .. "avx512 (the paper's prompts) or avx2", choices = {"auto", "avx512", "avx2"}},
  {"checkpoint_every", 1, "save the trainer every N updates (1: --resume is exact; 0: never)",
   min = 0},
  {"mixed_nodes", false, "under mpirun: let benchmark workers of different machine kinds "
   .. "measure one run (their GFLOPS are not comparable)"},
  {"worker_timeout", 30.0, "under mpirun: seconds without a heartbeat after which a benchmark "
   .. "worker is dropped and its kernels go to another", above = 0},
  {"async", 0, "1: sample the next step (SQD: group) while this one is evaluated, and evaluate "
   .. "it while this one trains; its samples come from the policy one update behind the one "
   .. "that trains on them (the GRPO ratio uses the sampling policy's log-probs). Needs "
   .. "benchmark workers (mpirun): kernels timed beside the sampler would be mis-measured",
   min = 0, max = 1},
  cli.debug_option,
}

-- The seeds of a sweep after parsing: --seeds, else the one --seed. Giving both is a
-- user's error (which one should run?); a --seed given over a profile's seeds runs that
-- one seed. A single seed (--seeds=1, or a list of one) is --seed: runs keep the
-- directory names they have without seeds.
function options.resolve_seeds(opts)
  if not opts or opts.seeds == nil then return end
  local seeds = options.parse_seeds(opts.seeds)
  local given = opts._given or {}
  if seeds and given.seed ~= nil and given.seeds == nil then seeds = nil end
  if seeds and given.seed ~= nil then
    cli.fail(string.format("--seed=%s and --seeds=%s conflict: --seed runs one seed, "
                           .. "--seeds several; give only one of them",
                           tostring(opts.seed), opts.seeds))
  end
  if seeds and #seeds == 1 then opts.seed = seeds[1]; seeds = nil end
  opts.seed_list = seeds or {opts.seed}
end

-- Adds the shared options after an experiment's own (its own win on name clashes), and
-- says in its description what options.parse does without --model.
function options.spec(spec)
  if spec.profiles and spec.profiles.small then
    spec.description = spec.description .. "\nWithout --model the default small model runs "
      .. "with the small profile; with --model the paper's values are the defaults."
  end
  local names = {}
  for _, o in ipairs(spec.options) do names[o[1]] = true end
  for _, o in ipairs(options.shared) do
    if not names[o[1]] then spec.options[#spec.options + 1] = o end
  end
  return spec
end

-- Hands the benchmark workers' settings to engine.cluster (a no-op in one process).
function options.configure_cluster(opts)
  local engine_cluster = rawget(_G, "cluster")
  if not (opts and opts.worker_timeout and engine_cluster and engine_cluster.configure) then return end
  engine_cluster.configure{worker_timeout = opts.worker_timeout, mixed_nodes = opts.mixed_nodes}
end

-- --task_dir: its specs join the suite's (an error is the user's to fix, said in one line).
function options.add_task_dir(opts)
  if opts.task_dir == nil or opts.task_dir == "" then return end
  local ok, err = pcall(require("engine.tasks").add_dir, opts.task_dir)
  if not ok then cli.fail("--task_dir=" .. opts.task_dir .. ": " .. cli.clean_message(err)) end
end

-- --task, --task_size and --task_dir: the task must exist, its size too (a spec's error
-- is the user's to fix, said in one line).
function options.check_task(opts, spec)
  if opts.task == nil then return end
  local tasks = require "engine.tasks"
  options.add_task_dir(opts)
  if opts.tasks ~= nil and opts.tasks ~= "" then return options.check_mixture(opts, tasks) end
  if opts.task:match("^cuda:") then return options.check_cuda_task(opts, spec) end
  local ok, spec = pcall(tasks.get, opts.task)
  if not ok then cli.fail("--task=" .. opts.task .. ": " .. cli.clean_message(spec)) end
  if opts.task ~= "matmul" then
    if opts.task_size == "" then opts.task_size = spec.split == "train" and "train" or "heldout" end
    local fine, err = pcall(tasks.resolve_spec, spec, opts.task_size)
    if not fine then cli.fail("--task_size=" .. opts.task_size .. ": " .. cli.clean_message(err)) end
  end
end

-- --task=cuda:NAME: a CUDA task of stdlib/cuda_tasks at a size of its spec (train, or
-- heldout for a held-out task, when --task_size is empty). Whether this machine can run it
-- is the session's to say (cuda_eval.bench), with the driver's reason. Only a script whose
-- spec says `cuda_tasks = true` (experiment1.lua) takes one.
function options.check_cuda_task(opts, spec)
  if opts.prefill then
    cli.fail("--prefill: a CUDA task's answer has no C prototype to begin with (CPU tasks only)")
  end
  if not (spec and spec.cuda_tasks) then
    cli.fail("--task=" .. opts.task .. ": CUDA tasks run in experiment1.lua (this script's prompts, stages and "
             .. "checks are the CPU tasks')")
  end
  local name = opts.task:sub(6)
  local ok, spec = pcall(require("engine.cuda_tasks").get, name)
  if not ok then
    local names = {}
    for _, s in ipairs(require("engine.cuda_tasks").list()) do names[#names + 1] = s.name end
    cli.fail("--task=" .. opts.task .. ": no CUDA task '" .. name .. "' (have: " .. table.concat(names, ", ") .. ")")
  end
  if opts.task_size == "" then opts.task_size = spec.split == "train" and "train" or "heldout" end
  if not spec.sizes[opts.task_size] then
    local sizes = {}
    for k in pairs(spec.sizes) do sizes[#sizes + 1] = k end
    table.sort(sizes)
    cli.fail("--task_size=" .. opts.task_size .. ": " .. name .. " has sizes " .. table.concat(sizes, ", "))
  end
  if opts.reward == "kernelcompare" then
    cli.fail("--reward=kernelcompare needs a CPU task's seed kernel: a CUDA task takes gflops (its speed "
             .. "against libtorch's op) or normalized")
  end
end

-- --tasks: the mixture's names (opts.task_list), each with the named size --task_size
-- (train when empty). Rewards in one unit need a per-task scale: kernelcompare has none.
function options.check_mixture(opts, tasks)
  local given = opts._given or {}
  if given.task ~= nil then cli.fail("--task and --tasks conflict: --task runs one task, --tasks a mixture") end
  if opts.reward == "kernelcompare" then
    cli.fail("--reward=kernelcompare compares with one task's seed kernel: a mixture (--tasks) takes gflops or normalized")
  end
  local names = {}
  if opts.tasks == "train" then
    for _, t in ipairs(tasks.list("train")) do names[#names + 1] = t.name end
  else
    for name in (opts.tasks .. ","):gmatch("%s*([^,]-)%s*,") do
      if name ~= "" then names[#names + 1] = name end
    end
  end
  if #names == 0 then cli.fail("--tasks=" .. opts.tasks .. ": no task named") end
  if opts.task_size == "" then opts.task_size = "train" end
  local seen = {}
  for _, name in ipairs(names) do
    if seen[name] then cli.fail("--tasks: '" .. name .. "' is listed twice") end
    seen[name] = true
    local ok, spec = pcall(tasks.get, name)
    if not ok then cli.fail("--tasks: " .. cli.clean_message(spec)) end
    local fine, err = pcall(tasks.resolve_spec, spec, opts.task_size)
    if not fine then cli.fail("--tasks: " .. name .. " at --task_size=" .. opts.task_size .. ": " .. cli.clean_message(err)) end
  end
  opts.task_list = names
end

-- Parses the command line. Without --model (the default small model) and without
-- --profile, the "small" profile applies; with --model the paper's values do.
function options.parse(argv, spec)
  local opts, _, help = args.try_parse(argv, spec)
  if opts and opts._given.model == nil and opts._given.profile == nil
     and spec.profiles and spec.profiles.small then
    local with_profile = {[0] = argv[0], "--profile=small"}
    for i = 1, #argv do with_profile[i + 1] = argv[i] end
    opts = args.parse(with_profile, spec)
  elseif help or not opts then
    opts = args.parse(argv, spec)  -- prints help or the error
  end
  options.check_task(opts, spec)
  checks.check_bench_options(opts)
  options.resolve_seeds(opts)
  options.configure_cluster(opts)
  return opts
end

return options
