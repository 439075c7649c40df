-- What a run is built from: the primitives it calls (injected, so tests can stand in for
-- them), the model and the device it runs on, and what each primitive is handed, made
-- from the parsed options and one configuration: the trainer's options, the benchmark's,
-- the prompts' task. The experiments and the scripts that sample or evaluate as they do
-- build these here, so all of them measure the same problem.
--
-- The primitives (deps) default to the engine's modules:
--   deps.policy  policy.load(dir, {device =, dtype =}) -> pol; pol:sample(prompts, opts)
--   deps.bench   bench.evaluate_batch(sources, opts); bench.machine() (optional)
--   deps.train   train.grpo(pol, wiring.train_opts()) -> trainer; trainer:step(groups);
--                trainer:save(dir) and trainer:load(dir) for checkpoints

local cli = require "core.cli"
local prompts = require "method.prompts"
local reward = require "method.reward"

local wiring = {}

-- The default model: the small kernel-writing model shipped in the engine's models/
-- (models/small/README.md says how scripts/experiments/pretrain.lua made it).
wiring.default_model_name = "small"
wiring.default_model = engine.models .. "/" .. wiring.default_model_name
-- A CUDA task's (--task=cuda:NAME): the same shape, trained on CUDA device code too.
wiring.default_cuda_model = engine.models .. "/small-cuda"

-- The primitives: the caller's, else the engine's modules.
function wiring.deps(deps)
  deps = deps or {}
  local engine_policy = rawget(_G, "policy") or package.loaded["engine.policy"]
  local out = {injected = deps.policy ~= nil and deps.policy ~= engine_policy}
  for _, name in ipairs{"policy", "bench", "train"} do
    out[name] = deps[name] or rawget(_G, name)
    if out[name] == nil then
      local ok, mod = pcall(require, "engine." .. name)
      if ok then out[name] = mod end
    end
    if out[name] == nil then
      cli.fail(string.format("this engine has no '%s' module (engine.%s): build it, or "
                             .. "pass a stand-in as deps.%s", name, name, name))
    end
  end
  return out
end

-- The model directory, with a clear error when it is missing or its config.json is not
-- JSON.
function wiring.model_dir(opts, deps)
  local cuda = require("method.cuda_eval").task_name(opts.task)
  local dir = opts.model or (cuda and wiring.default_cuda_model or wiring.default_model)
  if not deps.injected and not sys.exists(dir .. "/config.json") then
    if opts.model then
      cli.fail(string.format("--model=%s: no Hugging Face checkpoint there (config.json "
                             .. "is missing)", dir))
    end
    cli.fail(string.format("the default model %s is missing: restore it from the "
                           .. "repository (or remake it with engine pretrain.lua), or "
                           .. "pass --model=DIR, a Hugging Face Qwen2/Llama checkpoint", dir))
  end
  if not deps.injected then
    local ok, config = pcall(json.read, dir .. "/config.json")
    if not ok or type(config) ~= "table" then
      cli.fail(string.format("%s%s/config.json is not a model's JSON configuration%s",
                             opts.model and "--model=" or "", dir,
                             ok and "" or (": " .. cli.clean_message(config))))
    end
  end
  return dir
end

-- The device of --device: auto is CUDA when the policy module sees a GPU, else cpu. An
-- explicit cuda without one is refused here, before anything is created.
function wiring.device(name, policy_module)
  policy_module = policy_module or rawget(_G, "policy")
  local has_cuda = type(policy_module) == "table" and policy_module.cuda_available
                   and policy_module.cuda_available() or false
  if name == nil or name == "auto" then return has_cuda and "cuda" or "cpu" end
  if name:match("^cuda") and type(policy_module) == "table" and policy_module.cuda_available
     and not has_cuda then
    cli.fail(string.format("--device=%s: this engine sees no CUDA device (a CPU build "
                           .. "of libtorch, or no GPU visible); use --device=cpu, or "
                           .. "auto", name))
  end
  return name
end

-- Loads the policy of --model on --device. A model that is missing or does not load is the
-- user's to fix: one line, and (called before a run is opened) no directory left behind.
function wiring.load_policy(opts, deps)
  local dir = wiring.model_dir(opts, deps)
  local device = wiring.device(opts.device, deps.policy)
  return cli.try(string.format("%s%s: cannot load the model on %s",
                               opts.model and "--model=" or "", dir, device),
                 deps.policy.load, dir, {device = device, dtype = opts.dtype}), dir
end

-- The GRPO trainer's options. beta = 0 loads no reference model (the trainer's contract).
function wiring.train_opts(opts, config)
  local t = {lr = config.lr, beta = config.beta or opts.beta or 0, clip = opts.clip,
             loss = opts.loss, num_iterations = opts.num_iterations,
             scale_rewards = opts.scale_rewards}
  if opts.micro_batch > 0 then t.micro_batch = opts.micro_batch end
  t.lora = wiring.lora(opts, opts.lora_r)
  return t
end

-- A trainer's LoRA adapter of rank r, with --lora_alpha and --lora_dropout: GRPO's
-- (--lora_r) and KernelCompare's SFT (--sft_lora_r). Nil for r = 0: the full model.
function wiring.lora(opts, r)
  if r > 0 then return {r = r, alpha = opts.lora_alpha, dropout = opts.lora_dropout} end
  return nil
end

-- What pol:sample is asked for: G completions of each prompt, drawn with `seed`.
function wiring.sample_opts(opts, seed)
  return {n = opts.G, temperature = opts.temperature, top_p = opts.top_p,
          max_tokens = opts.max_tokens, seed = seed}
end

-- The problem and compiler settings every kernel is benchmarked with. C starts as NaN:
-- the prompts say it must be fully overwritten, and a kernel that only adds into it fails.
-- A task of the suite other than matmul (--task), or nil.
function wiring.task_name(opts)
  if opts.task == nil or opts.task == "" or opts.task == "matmul" then return nil end
  return opts.task
end

function wiring.bench_opts(opts, config)
  local b = {opt = config.opt, timeout = opts.timeout, warmup = opts.warmup, runs = opts.runs,
             max_runs = opts.max_runs, cov_target = opts.cov_target, verify = opts.verify,
             problem = {M = opts.size, N = opts.size, K = opts.size, c_init = "nan"}}
  if wiring.task_name(opts) then b.problem = {task = opts.task, size = opts.task_size} end
  if opts.threads > 0 then b.threads = opts.threads end
  return b
end

-- The run's tasks, in order: a mixture's (--tasks), or the one task ("matmul" for matmul).
function wiring.task_names(opts)
  return opts.task_list or {wiring.task_name(opts) or "matmul"}
end

-- bench_opts and task for one task of a mixture (matmul through the suite, at its named size).
function wiring.bench_opts_for(opts, config, name)
  local b = wiring.bench_opts(opts, config)
  b.problem = {task = name, size = opts.task_size ~= "" and opts.task_size or "train"}
  return b
end

function wiring.task_for(opts, config, name)
  local t = wiring.task(opts, config)
  if name == "matmul" then
    local _, size = require("engine.tasks").resolve_spec(require("engine.tasks").get("matmul"), opts.task_size)
    t.name, t.size, t.M, t.N, t.K = nil, nil, size.M, size.N, size.K
  else
    t.name, t.size = name, opts.task_size ~= "" and opts.task_size or "train"
  end
  return t
end

-- What bounds a task's speed on `machine` (a bench.machine() record): the measured memory
-- bandwidth for a memory-bound task, else the measured FP64 peak of the threads a kernel
-- runs on (threads 0: all cores). Nil where the machine has no such measurement.
function wiring.roofline(machine, name, threads)
  machine = machine or {}
  if name ~= "matmul" and require("engine.tasks").get(name).roofline == "memory" then
    return machine.measured_bandwidth_gbps
  end
  local peak, cores = machine.measured_peak_gflops, machine.cores
  if not (peak and cores and cores > 0) then return nil end
  local used = (threads or 0) > 0 and math.min(threads, cores) or cores
  return peak * used / cores
end

-- A judged kernel's roofline score: its speed (reward.speed: GB/s for a memory-bound task)
-- as a percentage of `limit` (wiring.roofline), 0 for a kernel that is not ok; nil
-- without a limit.
function wiring.roofline_score(r, limit)
  if not (limit and limit > 0) then return nil end
  if r.status ~= "ok" then return 0 end
  return 100 * reward.speed(r) / limit
end

-- What the roofline scores are measured against, in words.
function wiring.rooflines_text(machine)
  machine = machine or {}
  local peak, bw = machine.measured_peak_gflops, machine.measured_bandwidth_gbps
  if not (peak or bw) then return "This machine has no measured peak or bandwidth: no roofline score." end
  return string.format("Rooflines on this machine: FP64 peak %s GFLOPS over %s cores, memory bandwidth %s GB/s.",
                       peak and string.format("%.1f", peak) or "-", tostring(machine.cores or "-"),
                       bw and string.format("%.1f", bw) or "-")
end

-- The problem the prompts describe: the task (name = nil: matmul), its sizes, compiler
-- level, threads and vector ISA; for a CUDA task (--task=cuda:NAME) its name as `cuda`
-- (the session adds the GPU's name, `gpu`, which its prompt states).
function wiring.task(opts, config)
  local cuda = require("method.cuda_eval").task_name(opts.task)
  if cuda then return {name = opts.task, cuda = cuda, size = opts.task_size} end
  return {name = wiring.task_name(opts), size = wiring.task_name(opts) and opts.task_size or nil,
          M = opts.size, N = opts.size, K = opts.size, opt = config.opt,
          threads = opts.threads > 0 and opts.threads or nil, isa = prompts.isa(opts.isa)}
end

return wiring
