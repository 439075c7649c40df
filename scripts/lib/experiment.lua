-- What both experiments share: their common options, the primitives they call (injected,
-- so tests can stand in for them), opening a resumable run per configuration, the
-- pipeline of work items, and per-step progress. The session of a run (sampling, judging,
-- the GRPO update with its checkpoint, recording samples) is session.lua.
--
-- The primitives (deps) default to the engine's modules:
--   deps.policy  policy.load(dir, {device =, dtype =}) -> pol; pol:sample(prompts, opts)
--   deps.bench   bench.evaluate_batch(sources, opts); bench.machine() (optional)
--   deps.train   train.grpo(pol, experiment.train_opts()) -> trainer; trainer:step(groups);
--                trainer:save(dir) and trainer:load(dir) for checkpoints

local progress = require "engine.progress"
local prompts = require "prompts"
local reward = require "reward"
local stages = require "stages"
local sweep = require "engine.sweep"

local experiment = {}

-- The default model: the small kernel-writing model shipped in the engine's models/
-- (models/small/README.md says how scripts/experiments/pretrain.lua made it).
experiment.default_model_name = "small"
experiment.default_model = engine.models .. "/" .. experiment.default_model_name

-- --device: auto (CUDA when this engine sees a GPU, else the CPU), cpu, cuda or cuda:N.
function experiment.check_device(v)
  if v == "auto" or v == "cpu" or v == "cuda" or v:match("^cuda:%d+$") then return true end
  return nil, "expected auto, cpu, cuda or cuda:N, got '" .. v .. "'"
end

-- The --debug option of every script that runs under experiment.main.
experiment.debug_option = {"debug", false, "show the Lua traceback of every error, the "
                           .. "user's mistakes included"}

-- Options every experiment has; each experiment adds its own and its sweep axes.
-- Defaults are the paper's values where it gives them. min/above/max/check (engine.args)
-- refuse impossible values before anything is created.
-- How every call's output is checked (bench's verify): one spec for every script.
experiment.verify_option = {"verify", "fp64", "verification of every call: fp64 (every element, "
  .. "double-precision error bound) or paper (the paper's 105 points, relative error 1e-6)",
  choices = {"fp64", "paper"}}

experiment.options = {
  {"out", nil, "run directory (one subdirectory per configuration)", type = "string"},
  {"configs", "", "which configurations to run: indices '1,4' or conditions 'opt=O3,lr=5e-7'"},
  {"resume", false, "continue the runs in --out where they stopped"},
  {"model", nil, "policy checkpoint directory, Hugging Face format [default: "
   .. experiment.default_model .. ", with the small profile]", type = "string"},
  {"device", "auto", "where the policy runs: auto (CUDA when present, else cpu), cpu, cuda, "
   .. "cuda:N", check = experiment.check_device},
  {"dtype", "fp32", "policy weights: fp32, bf16, fp16", choices = {"fp32", "bf16", "fp16"}},
  {"G", 64, "completions per prompt (the group size)", min = 1},
  {"temperature", 1.0, "sampling temperature", min = 0},
  {"top_p", 1.0, "nucleus sampling threshold", above = 0, max = 1},
  {"max_tokens", 2048, "longest completion in tokens", min = 1},
  {"size", 256, "matrix size: M = N = K", min = 1},
  {"timeout", 8.0, "seconds a kernel may run before it is a timeout", above = 0},
  {"warmup", 1, "untimed runs before timing", min = 0},
  {"runs", 3, "timed runs (the fastest gives the GFLOPS)", min = 1},
  {"max_runs", 10, "more timed runs, up to this many, while their CoV is above --cov_target "
   .. "(at most --runs: exactly --runs, as in the paper)", min = 1},
  {"cov_target", 0.05, "the spread of timed runs (CoV) below which no more are made", min = 0},
  {"threads", 0, "threads per kernel (0: all cores)", min = 0},
  experiment.verify_option,
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
  {"seed", 1, "seed of sampling and of SQD's random choices (one run per configuration)"},
  {"seeds", "", "run every configuration once per seed: a list '1,2,3', or a count N "
   .. "(seeds 1..N); several seeds add ',seed=S' to each run's directory name (empty: --seed)",
   check = function(v)
     local seeds, why = experiment.parse_seeds(v)
     if seeds or v == "" then return true end
     return nil, why
   end},
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
  experiment.debug_option,
}

-- The options that say where/how to run, not what is run: left out of a run's identity,
-- so a run can be resumed or extended with different values.
experiment.runtime_options = {out = true, configs = true, resume = true, profile = true,
                              device = true, steps = true, iterations = true, _ = true,
                              _given = true, checkpoint_every = true, debug = true,
                              seeds = true, seed_list = true, mixed_nodes = true,
                              worker_timeout = true}

-- --seeds: "" (none: --seed alone), a count "N" (seeds 1..N) or a list "4,7,9" of distinct
-- integers. Returns the list of seeds (nil for ""), or nil and why the text is not one.
function experiment.parse_seeds(text)
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
  for item in (text .. ","):gmatch("([^,]*),") do
    local s = math.tointeger(tonumber(item:match("^%s*(.-)%s*$")))
    if not s then
      return nil, "expected a count N or a list of integer seeds like 1,2,3, got '" .. text .. "'"
    end
    if seen[s] then return nil, "seed " .. s .. " is listed twice in '" .. text .. "'" end
    seen[s] = true
    seeds[#seeds + 1] = s
  end
  if #seeds == 0 then return nil, "no seed in '" .. text .. "'" end
  return seeds
end

-- The seeds of a sweep after parsing: --seeds, else the one --seed. Giving both is a
-- user's error (which one should run?); a --seed given over a profile's seeds runs that
-- one seed. A single seed (--seeds=1, or a list of one) is --seed: runs keep the
-- directory names they have without seeds.
function experiment.resolve_seeds(opts)
  if not opts or opts.seeds == nil then return end
  local seeds = experiment.parse_seeds(opts.seeds)
  local given = opts._given or {}
  if seeds and given.seed ~= nil and given.seeds == nil then seeds = nil end
  if seeds and given.seed ~= nil then
    experiment.fail(string.format("--seed=%s and --seeds=%s conflict: --seed runs one seed, "
                                  .. "--seeds several; give only one of them",
                                  tostring(opts.seed), opts.seeds))
  end
  if seeds and #seeds == 1 then opts.seed = seeds[1]; seeds = nil end
  opts.seed_list = seeds or {opts.seed}
end

-- The runs of a sweep: each configuration once per seed of opts.seed_list. With several
-- seeds each run's configuration holds its seed (its directory name ends in ',seed=S');
-- with one it does not, and the seed stays an option of the run (as it always was).
-- Seeds are the outer loop: every configuration's first seed runs before any second.
function experiment.with_seeds(configs, opts)
  local seeds = opts.seed_list or {opts.seed}
  if #seeds <= 1 then return configs end
  local out = {}
  for _, seed in ipairs(seeds) do
    for _, config in ipairs(configs) do
      local copy = {seed = seed}
      for k, v in pairs(config) do copy[k] = v end
      out[#out + 1] = copy
    end
  end
  return out
end

-- The options one run of a configuration uses: its own seed when the configuration has one.
function experiment.run_opts(opts, config)
  if config.seed == nil or config.seed == opts.seed then return opts end
  local copy = {}
  for k, v in pairs(opts) do copy[k] = v end
  copy.seed = config.seed
  return copy
end

-- --reward: a scheme of reward.lua (checked when the options are parsed).
function experiment.check_reward(v)
  if reward.schemes[v] then return true end
  local names = {}
  for k in pairs(reward.schemes) do names[#names + 1] = k end
  table.sort(names)
  return nil, "no reward scheme '" .. v .. "' (have: " .. table.concat(names, ", ") .. ")"
end

-- A mistake of the user's (a missing model, an existing run, a run in use, a bad
-- checkpoint): main() prints it alone, on one line, without a traceback.
local UserError = {__tostring = function(e) return e.message end}

function experiment.fail(message)
  error(setmetatable({message = message}, UserError), 0)
end

function experiment.is_user_error(e)
  return getmetatable(e) == UserError
end

-- Calls fn(...), a function of what a primitive raised that the user can act on (a bad
-- checkpoint, a run in use): its error becomes a user's mistake, `what` followed by the
-- primitive's message, without the traceback a script's own bug keeps.
function experiment.try(what, fn, ...)
  local result = table.pack(pcall(fn, ...))
  if result[1] then return table.unpack(result, 2, result.n) end
  local err = result[2]
  if experiment.is_user_error(err) then error(err, 0) end
  local message = experiment.clean_message(err)
  experiment.fail(what and (what .. ": " .. message) or message)
end

-- A primitive's message as one printable line: its first (never a C++ backtrace), without
-- the input a JSON parser quotes from a damaged file ("last read: '...'", binary bytes of
-- any length), other quoted text cut at 60 characters, and no byte that is not text.
function experiment.clean_message(message)
  local line = tostring(message):gsub("\n.*", "")
  line = line:gsub("; last read: '.*$", ""):gsub("%[json%.exception%.[%w_.]+%] ", "")
  line = line:gsub("'([^']*)'", function(quoted)
    if #quoted > 60 then return "'" .. quoted:sub(1, 57) .. "...'" end
  end)
  line = line:gsub("[%c\127]", "?")
  if not utf8.len(line) then line = line:gsub("[\128-\255]", "?") end  -- not UTF-8: bytes
  return line
end

-- Whether the command line asks for --debug (read before the options are parsed, so a
-- mistake in them shows its traceback too).
function experiment.wants_debug(argv)
  if type(argv) ~= "table" then return false end
  for _, a in ipairs(argv) do
    if a == "--debug" or a == "--debug=true" or a == "--debug=1" or a == "--debug=yes" then
      return true
    end
  end
  return false
end

-- Calls fn(argv, ...); a user's mistake ends the script with its one-line message and
-- status 1; any other error (a bug in a script being edited) keeps its traceback, and
-- with --debug every error does.
function experiment.main(program, fn, argv, ...)
  local debugging = experiment.wants_debug(argv)
  local ok, err = xpcall(fn, function(e)
    if experiment.is_user_error(e) and not debugging then return e end
    return debug.traceback(tostring(e), 2)
  end, argv, ...)
  if ok then return end
  io.stderr:write(program, ": ", tostring(err), "\n")
  os.exit(1)
end

-- Adds the shared options after an experiment's own (its own win on name clashes).
function experiment.spec(spec)
  local names = {}
  for _, o in ipairs(spec.options) do names[o[1]] = true end
  for _, o in ipairs(experiment.options) do
    if not names[o[1]] then spec.options[#spec.options + 1] = o end
  end
  return spec
end

-- Parses the command line. Without --model (the default small model) and without
-- --profile, the "small" profile applies; with --model the paper's values do.
function experiment.parse(argv, spec)
  local args = require "engine.args"
  local opts, err, help = args.try_parse(argv, spec)
  if opts and opts._given.model == nil and opts._given.profile == nil
     and spec.profiles and spec.profiles.small then
    local with_profile = {[0] = argv[0], "--profile=small"}
    for i = 1, #argv do with_profile[i + 1] = argv[i] end
    opts = args.parse(with_profile, spec)
  elseif help or not opts then
    opts = args.parse(argv, spec)  -- prints help or the error
  end
  experiment.check_bench_options(opts)
  experiment.resolve_seeds(opts)
  experiment.configure_cluster(opts)
  return opts
end

-- Hands the benchmark workers' settings to engine.cluster (a no-op in one process).
function experiment.configure_cluster(opts)
  local engine_cluster = rawget(_G, "cluster")
  if not (opts and opts.worker_timeout and engine_cluster and engine_cluster.configure) then return end
  engine_cluster.configure{worker_timeout = opts.worker_timeout, mixed_nodes = opts.mixed_nodes}
end

-- The machine that measures the kernels: the benchmark workers' under mpirun (with the
-- list of workers), else this one's.
function experiment.measuring_machine(deps)
  local engine_cluster = rawget(_G, "cluster")
  if deps.bench == rawget(_G, "bench") and engine_cluster and engine_cluster.size() > 1 then
    local nodes, machine = {}, nil
    for _, w in ipairs(engine_cluster.workers()) do
      nodes[#nodes + 1] = {node = w.host .. ":" .. w.rank, kind = w.kind, alive = w.alive}
      if w.alive and not machine then machine = w.machine end
    end
    if machine then return machine, nodes end
  end
  return deps.bench.machine(), nil
end

-- The benchmark options checked by the benchmark's own rules (64 calls at most, the
-- timeout's range, ...) and by the machine's (its cores, the memory of --size's inputs)
-- before anything is made: a bad combination is the user's to fix.
function experiment.check_bench_options(opts)
  local engine_bench = rawget(_G, "bench")
  if not (opts and opts.warmup and engine_bench and engine_bench.check_options) then return end
  local ok, err = pcall(engine_bench.check_options,
                        {warmup = opts.warmup, runs = opts.runs, max_runs = opts.max_runs,
                         cov_target = opts.cov_target, timeout = opts.timeout, verify = opts.verify})
  if not ok then
    local why = tostring(err):gsub("^bench%.check_options: ", "")
    experiment.fail(string.format("--warmup=%s --runs=%s --max_runs=%s --timeout=%s: %s", opts.warmup, opts.runs,
                                  opts.max_runs, opts.timeout, why))
  end
  if opts.threads then experiment.check_threads(opts, experiment.measuring_machine({bench = engine_bench})) end
  if opts.size then experiment.check_size(opts, engine_bench.reference ~= nil) end
end

-- A field of /proc/meminfo (MemTotal, MemAvailable) in bytes, or nil where there is none.
experiment.meminfo_file = "/proc/meminfo"

function experiment.meminfo(field)
  local f = io.open(experiment.meminfo_file)
  if not f then return nil end
  local kb = ("\n" .. f:read("a")):match("\n" .. field .. ":%s*(%d+)")
  f:close()
  return kb and tonumber(kb) * 1024
end

-- More threads than the measuring machine has cores would time every kernel
-- oversubscribed (and bench.reference dies on thousands).
function experiment.check_threads(opts, machine)
  local cores = type(machine) == "table" and machine.cores
  if not cores or opts.threads <= cores then return end
  experiment.fail(string.format("--threads=%d: at most %d, the cores of the machine that times "
                                .. "the kernels (bench.machine().cores)", opts.threads, cores))
end

-- Every call of a measurement gets inputs of its own, made before the first: A, B, C and
-- |A||B| (C's error bound), size^2 doubles each (engine/bench/matmul.cpp, prepare). The
-- evaluation process makes at most 4096 MB of them; and they must fit twice in memory
-- (made in shared memory, then copied into the pool). bench.reference, which every run
-- measures first, makes 5 warm-up and 20 timed calls (engine/host/mod_bench.cpp).
experiment.max_reference_mb = 4096
experiment.reference_calls = 25

function experiment.check_size(opts, with_reference)
  local calls = opts.warmup + math.max(opts.runs, opts.max_runs)
  local which = "--warmup + --max_runs"
  if with_reference and experiment.reference_calls > calls then
    calls, which = experiment.reference_calls, "the OpenBLAS reference's 5 warm-up + 20 timed"
  end
  local limit, why = experiment.max_reference_mb * 2^20, "the evaluation's limit"
  local total = experiment.meminfo("MemTotal")
  if total and total / 2 < limit then limit, why = total / 2, "half of MemTotal" end
  local bytes = calls * 4 * 8 * opts.size^2
  if bytes <= limit then return end
  experiment.fail(string.format("--size=%d: at most %d here: %d calls (%s) each keep A, B, C and "
                                .. "|A||B| in doubles, %.0f MB in all, over %.0f MB (%s)", opts.size,
                                math.floor(math.sqrt(limit / (calls * 4 * 8))), calls, which,
                                bytes / 2^20, limit / 2^20, why))
end

-- A lower bound of the memory pol:sample needs, in bytes: it draws G completions of every
-- prompt of a call at once (engine/policy/generate.cpp), each row holding the key/value
-- cache of every layer for max_tokens tokens (the prompt's come on top), their attention
-- mask (fp32), and its logits and their probabilities (2 x vocab fp32). cfg: the model's
-- config.json. Nil when cfg lacks the dimensions.
function experiment.sampling_bytes(cfg, opts, prompts_per_call)
  local layers, heads, hidden, vocab = cfg.num_hidden_layers, cfg.num_attention_heads,
                                       cfg.hidden_size, cfg.vocab_size
  local dims = {layers, heads, hidden, vocab}
  for i = 1, 4 do  -- not ipairs: it would stop at the first missing one
    if type(dims[i]) ~= "number" or dims[i] <= 0 then return nil end
  end
  local kv_heads = cfg.num_key_value_heads or heads
  local head_dim = cfg.head_dim or hidden // heads
  local tokens = math.min(opts.max_tokens, cfg.max_position_embeddings or opts.max_tokens)
  local dtype_bytes = opts.dtype == "fp32" and 4 or 2
  local row = 2 * layers * kv_heads * head_dim * tokens * dtype_bytes + tokens * 4 + 2 * vocab * 4
  return opts.G * prompts_per_call * row, row
end

-- --G (and --max_tokens) against the memory free now (MemAvailable): more ends in
-- libtorch's out-of-memory error mid-run. On the CPU only: on CUDA the cache is in the
-- GPU's memory, which this engine does not report.
function experiment.check_memory(opts, dir, device)
  if device ~= "cpu" or not opts.G then return end
  local ok, cfg = pcall(json.read, dir .. "/config.json")
  if not ok or type(cfg) ~= "table" then return end
  local prompts = opts.prompts_per_step or 1  -- experiment 2 samples one prompt a call
  local need, row = experiment.sampling_bytes(cfg, opts, prompts)
  local free = experiment.meminfo("MemAvailable")
  if not (need and free) or need <= free then return end
  local most = math.floor(free / (prompts * row))
  experiment.fail(string.format("--G=%d: %d completions x %d prompt(s) of up to %d tokens need at "
                                .. "least %.0f MB for the policy's key/value cache and logits "
                                .. "(%s), more than the %.0f MB free (MemAvailable): %s",
                                opts.G, opts.G, prompts, opts.max_tokens, need / 2^20, dir,
                                free / 2^20, most >= 1 and ("lower --G (at most " .. most .. ") or "
                                                            .. "--max_tokens") or "lower --max_tokens"))
end

-- True when the calling file is the script the engine was asked to run (not loaded by a
-- test or another script).
function experiment.is_main()
  local source = debug.getinfo(2, "S").source
  return arg ~= nil and arg[0] ~= nil and source:match("[^/]+$") == arg[0]:match("[^/]+$")
end

-- The primitives: the caller's, else the engine's modules.
function experiment.deps(deps)
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
      experiment.fail(string.format("this engine has no '%s' module (engine.%s): build it, or "
                                    .. "pass a stand-in as deps.%s", name, name, name))
    end
  end
  return out
end

-- The model directory, with a clear error when it is missing or its config.json is not
-- JSON.
function experiment.model_dir(opts, deps)
  local dir = opts.model or experiment.default_model
  if not deps.injected and not sys.exists(dir .. "/config.json") then
    if opts.model then
      experiment.fail(string.format("--model=%s: no Hugging Face checkpoint there (config.json "
                                    .. "is missing)", dir))
    end
    experiment.fail(string.format("the default model %s is missing: restore it from the "
                                  .. "repository (or remake it with engine pretrain.lua), or "
                                  .. "pass --model=DIR, a Hugging Face Qwen2/Llama checkpoint", dir))
  end
  if not deps.injected then
    local ok, config = pcall(json.read, dir .. "/config.json")
    if not ok or type(config) ~= "table" then
      experiment.fail(string.format("%s%s/config.json is not a model's JSON configuration%s",
                                    opts.model and "--model=" or "", dir,
                                    ok and "" or (": " .. experiment.clean_message(config))))
    end
  end
  return dir
end

-- The device of --device: auto is CUDA when the policy module sees a GPU, else cpu. An
-- explicit cuda without one is refused here, before anything is created.
function experiment.device(name, policy_module)
  policy_module = policy_module or rawget(_G, "policy")
  local has_cuda = type(policy_module) == "table" and policy_module.cuda_available
                   and policy_module.cuda_available() or false
  if name == nil or name == "auto" then return has_cuda and "cuda" or "cpu" end
  if name:match("^cuda") and type(policy_module) == "table" and policy_module.cuda_available
     and not has_cuda then
    experiment.fail(string.format("--device=%s: this engine sees no CUDA device (a CPU build "
                                  .. "of libtorch, or no GPU visible); use --device=cpu, or "
                                  .. "auto", name))
  end
  return name
end

-- Loads the policy of --model on --device. A model that is missing or does not load is the
-- user's to fix: one line, and (called before a run is opened) no directory left behind.
function experiment.load_policy(opts, deps)
  local dir = experiment.model_dir(opts, deps)
  local device = experiment.device(opts.device, deps.policy)
  return experiment.try(string.format("%s%s: cannot load the model on %s",
                                      opts.model and "--model=" or "", dir, device),
                        deps.policy.load, dir, {device = device, dtype = opts.dtype}), dir
end

-- The GRPO trainer's options. beta = 0 loads no reference model (the trainer's contract).
function experiment.train_opts(opts, config)
  local t = {lr = config.lr, beta = config.beta or opts.beta or 0, clip = opts.clip,
             loss = opts.loss, num_iterations = opts.num_iterations,
             scale_rewards = opts.scale_rewards}
  if opts.micro_batch > 0 then t.micro_batch = opts.micro_batch end
  if opts.lora_r > 0 then
    t.lora = {r = opts.lora_r, alpha = opts.lora_alpha, dropout = opts.lora_dropout}
  end
  return t
end

-- The problem and compiler settings every kernel is benchmarked with. C starts as NaN:
-- the prompts say it must be fully overwritten, and a kernel that only adds into it fails.
function experiment.bench_opts(opts, config)
  local b = {opt = config.opt, timeout = opts.timeout, warmup = opts.warmup, runs = opts.runs,
             max_runs = opts.max_runs, cov_target = opts.cov_target, verify = opts.verify,
             problem = {M = opts.size, N = opts.size, K = opts.size, c_init = "nan"}}
  if opts.threads > 0 then b.threads = opts.threads end
  return b
end

function experiment.task(opts, config)
  return {M = opts.size, N = opts.size, K = opts.size, opt = config.opt,
          threads = opts.threads > 0 and opts.threads or nil, isa = prompts.isa(opts.isa)}
end

-- A run's identity: every option that changes what is computed, plus the configuration.
function experiment.identity(name, opts, config)
  local id = {experiment = name, config = config}
  for k, v in pairs(opts) do
    if not experiment.runtime_options[k] and config[k] == nil then id[k] = v end
  end
  return id
end

-- Options added after runs were made, with the value those runs computed with: a run
-- stored without one of them resumes when the option keeps that value.
experiment.introduced = {update_groups = 1, scale_rewards = "group", async = 0}

-- The identity to check against a stored one: without the introduced options the stored
-- run predates and this one leaves at their old value.
function experiment.as_stored(identity, stored)
  local out = {}
  for k, v in pairs(identity) do
    if not (stored[k] == nil and experiment.introduced[k] == v) then out[k] = v end
  end
  return out
end

-- Opens the run directory of one configuration. Refuses to write into an existing run
-- unless --resume is given; with --resume a missing run simply starts. A run another
-- engine has open, or one made with other options, is refused with what to do.
function experiment.open_run(dir, identity, opts)
  local exists = sys.exists(dir .. "/config.json")
  if exists and not opts.resume then
    experiment.fail(string.format("%s already holds a run: pass --resume to continue it, or "
                                  .. "choose another --out", dir))
  end
  if exists then identity = experiment.as_stored(identity, json.read(dir .. "/config.json")) end
  local ok, run = pcall(store.open, dir, {config = identity})
  if not ok then
    local message = tostring(run):gsub("\n.*", "")
    local differs = message:match("different configuration %(differs in: ([^)]*)%)")
    if differs then
      experiment.fail(string.format("%s holds a run made with other options (they differ in: "
                                    .. "%s): --resume continues a run only with the options it "
                                    .. "was started with; pass those, or choose another --out",
                                    dir, differs))
    end
    experiment.fail((message:gsub("^run store: ", "")))
  end
  log.info(exists and "resuming" or "starting", {dir = dir})
  return run
end

-- --out holding another experiment's runs: report.lua could not tell them apart (it refuses
-- such a directory). name: this experiment's, as its runs' config.json record it.
function experiment.check_out(out, name)
  if not (name and out and sys.exists(out)) then return end
  local entries = sys.listdir(out)
  table.sort(entries)
  for _, entry in ipairs(entries) do
    local ok, config = pcall(json.read, out .. "/" .. entry .. "/config.json")
    if ok and type(config) == "table" and config.experiment and config.experiment ~= name then
      experiment.fail(string.format("--out=%s holds runs of %s (%s): %s's runs need a directory "
                                    .. "of their own; choose another --out", out,
                                    tostring(config.experiment), entry, name))
    end
  end
end

-- Checks what a sweep needs before anything is made: --out holds no other experiment's
-- runs, the model is there, the device exists, sampling fits in memory, and no run
-- directory of the selected configurations is in the way (an existing run without
-- --resume, or a run another engine has open). dirs: the run directories, one per
-- configuration; name: the experiment's.
function experiment.prepare(opts, dirs, deps, name)
  experiment.check_out(opts.out, name)
  local model = experiment.model_dir(opts, deps)
  local device = experiment.device(opts.device, deps.policy)
  if not deps.injected then experiment.check_memory(opts, model, device) end
  for _, dir in ipairs(dirs) do
    if sys.exists(dir .. "/config.json") and not opts.resume then
      experiment.fail(string.format("%s already holds a run: pass --resume to continue it, or "
                                    .. "choose another --out", dir))
    end
    local pid = store.holder and store.holder(dir)
    if pid then
      experiment.fail(string.format("%s is in use by another engine (%s): wait for it to "
                                    .. "finish or stop it; one engine at a time may write a run",
                                    dir, pid > 0 and ("pid " .. pid) or "its pid is not known"))
    end
  end
end

-- Runs work items first..last (steps; SQD groups) through four stages:
--   sample(i) -> item   the policy's completions
--   start(item)         their evaluation begins (in the background with async)
--   collect(item)       waits for the evaluation, rewards
--   settle(item)        the update and the commit
-- In order without async. With async, item i+1 is sampled while item i is evaluated, and
-- evaluated while item i is trained on and committed, so the sampler and the trainer
-- wait only for the benchmark; the policy that samples item i+1 is then one update behind
-- the one that trains on it.
function experiment.pipeline(first, last, async, stages)
  if first > last then return end
  local item = stages.sample(first)
  stages.start(item)
  for i = first, last do
    local next_item
    if async and i < last then next_item = stages.sample(i + 1) end  -- overlaps item i's evaluation
    stages.collect(item)
    if next_item then stages.start(next_item) end                  -- overlaps item i's update
    stages.settle(item)
    if not async and i < last then
      next_item = stages.sample(i + 1)
      stages.start(next_item)
    end
    item = next_item
  end
end

-- --async=1 overlaps sampling with evaluation: the kernels must then be timed on other
-- cores than the sampler's, by benchmark workers.
function experiment.check_async(opts, deps)
  if (opts.async or 0) == 0 then return end
  local engine_cluster = rawget(_G, "cluster")
  if deps.bench ~= rawget(_G, "bench") then return end  -- a stand-in bench times nothing
  if not (engine_cluster and engine_cluster.size() > 1) then
    experiment.fail("--async=1 evaluates while the policy samples and trains: start benchmark "
                    .. "workers with mpirun (README, 'On a cluster'), so that no kernel is timed "
                    .. "on the cores the sampler uses")
  end
  if engine_cluster.shares_cores() then
    experiment.fail("--async=1: a benchmark worker times kernels on this process's cores, where "
                    .. "sampling and training would run meanwhile; give rank 0 cores of its own "
                    .. "(ENGINE_RANK0_CORES=N on a shared node) or a node of its own")
  end
end

-- The session of one configuration's run (session.lua): the policy, its trainer, and the
-- stages of a work item. Loaded on first use: session.lua builds on this module.
function experiment.session(run, opts, config, deps, pol)
  return require("session").new(run, opts, config, deps, pol)
end

---------------------------------------------------------------------------------------
-- Step figures: what the progress line, the log and metrics.jsonl show.
---------------------------------------------------------------------------------------

-- Summary of a step's results: mean reward, max GFLOPS, counts per status. The max is
-- the best kernel's confirmed figure when it was re-measured (Session:confirm_best);
-- max_gflops_measured is its first measurement.
function experiment.summary(results)
  local sum, n, top = 0, 0, nil
  local counts = {}
  for _, r in ipairs(results) do
    sum, n = sum + r.reward, n + 1
    counts[r.status] = (counts[r.status] or 0) + 1
    if r.status == "ok" and (top == nil or r.gflops > top.gflops) then top = r end
  end
  local confirmed = top and (top.confirmed_gflops or (top.extra and top.extra.confirmed_gflops))
  return {mean_reward = n > 0 and sum / n or 0, max_gflops = top and (confirmed or top.gflops),
          max_gflops_measured = top and top.gflops, kernels = n, counts = counts}
end

-- A progress display whose figures are the step's summary.
function experiment.progress(total, label)
  return progress.new{total = total, label = label, interval = 5}
end

function experiment.show(bar, done, record)
  local c = record.counts
  local fields = {step = record.step, reward = string.format("%.2f", record.mean_reward),
                  max_gflops = record.max_gflops and string.format("%.2f", record.max_gflops) or "-",
                  kl = record.kl or "-", statuses = experiment.counts_text(c),
                  seconds = string.format("sample %.2f evaluate %.2f update %.2f",
                                          record.seconds.sample, record.seconds.evaluate,
                                          record.seconds.update)}
  if bar.tty then bar.stream:write("\r\27[K") end  -- the log line replaces the bar's
  log.info(record.label or "step", fields)
  bar:update(done, {reward = record.mean_reward, gflops = record.max_gflops or 0,
                    ok = c.ok or 0, kl = record.kl or 0})
end

-- Counts per status as "status=n" text, in the order of Eq. 3, for logs.
function experiment.counts_text(counts)
  local parts = {}
  for _, status in ipairs(reward.statuses) do
    if counts[status] then parts[#parts + 1] = status .. "=" .. counts[status] end
  end
  return table.concat(parts, " ")
end

-- Closes a configuration's run and returns its summary: its name, config, directory and
-- best kernel, with the experiment's own counters (`counters`, e.g. {steps = 20}).
function experiment.close_run(run, name, config, counters)
  local best = run:samples{status = "ok", order_by = "gflops", descending = true, limit = 1}[1]
  local summary = {name = name, config = config, best_gflops = best and best.gflops,
                   best_id = best and best.id, dir = run:dir()}
  for k, v in pairs(counters) do summary[k] = v end
  run:close()
  return summary
end

-- What `engine experimentN.lua` prints at its end: a line per run (its `counter`, e.g.
-- "steps") and the report command.
function experiment.print_runs(runs, counter, out)
  for _, r in ipairs(runs) do
    print(string.format("%-32s %4d %-10s best %s GFLOPS  %s", r.name, r[counter], counter,
                        r.best_gflops and string.format("%.2f", r.best_gflops) or "-", r.dir))
  end
  print("report: engine report.lua " .. out)
end

-- Runs every configuration of a sweep in turn with run_config(opts, config, deps): the
-- vector ISA the prompts name made concrete first (--isa=auto: the benchmark machine's,
-- so each run's config.json records the one it used), and every run directory checked
-- before any is made. name: the experiment's ("experiment1"), as its runs record it.
function experiment.run_sweep(opts, configs, deps, run_config, name)
  deps = experiment.deps(deps)
  experiment.check_async(opts, deps)
  opts.isa = prompts.isa(opts.isa, deps.bench)
  log.info("vector ISA", {isa = opts.isa, name = stages.isa(opts.isa).name})
  local dirs = {}
  for i, config in ipairs(configs) do dirs[i] = opts.out .. "/" .. sweep.name(config) end
  experiment.prepare(opts, dirs, deps, name)
  local results = {}
  for i, config in ipairs(configs) do
    log.info("configuration", {index = i, name = sweep.name(config)})
    results[i] = run_config(opts, config, deps)
  end
  return results
end

return experiment
