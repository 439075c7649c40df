-- The options checked against the machine before anything is made: the benchmark's own
-- rules, the measuring machine's cores (--threads), the memory that --size's inputs and
-- sampling (--G, --max_tokens) take, and benchmark workers for --async. A bad value
-- would fail mid-run, or time kernels wrongly; here it is the user's to fix (cli.fail),
-- named by its option.

local cli = require "core.cli"

local checks = {}

-- The machine that measures the kernels: the benchmark workers' under mpirun (with the
-- list of workers), else this one's.
function checks.measuring_machine(deps)
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
function checks.check_bench_options(opts)
  local engine_bench = rawget(_G, "bench")
  if not (opts and opts.warmup and engine_bench and engine_bench.check_options) then return end
  local ok, err = pcall(engine_bench.check_options,
                        {warmup = opts.warmup, runs = opts.runs, max_runs = opts.max_runs,
                         cov_target = opts.cov_target, timeout = opts.timeout, verify = opts.verify})
  if not ok then
    local why = tostring(err):gsub("^bench%.check_options: ", "")
    cli.fail(string.format("--warmup=%s --runs=%s --max_runs=%s --timeout=%s: %s", opts.warmup, opts.runs,
                           opts.max_runs, opts.timeout, why))
  end
  if opts.threads then checks.check_threads(opts, checks.measuring_machine({bench = engine_bench})) end
  if opts.size then checks.check_size(opts, engine_bench.reference ~= nil) end
end

-- A field of /proc/meminfo (MemTotal, MemAvailable) in bytes, or nil where there is none.
checks.meminfo_file = "/proc/meminfo"

function checks.meminfo(field)
  local f = io.open(checks.meminfo_file)
  if not f then return nil end
  local kb = ("\n" .. f:read("a")):match("\n" .. field .. ":%s*(%d+)")
  f:close()
  return kb and tonumber(kb) * 1024
end

-- More threads than the measuring machine has cores would time every kernel
-- oversubscribed (and bench.reference dies on thousands).
function checks.check_threads(opts, machine)
  local cores = type(machine) == "table" and machine.cores
  if not cores or opts.threads <= cores then return end
  cli.fail(string.format("--threads=%d: at most %d, the cores of the machine that times "
                         .. "the kernels (bench.machine().cores)", opts.threads, cores))
end

-- Every call of a measurement gets inputs of its own, made before the first: A, B, C and
-- |A||B| (C's error bound), size^2 doubles each (engine/task/matmul.cpp, prepare). The
-- evaluation process makes at most 4096 MB of them; and they must fit twice in memory
-- (made in shared memory, then copied into the pool). bench.reference, which every run
-- measures first, makes 5 warm-up and 20 timed calls (engine/host/mod_bench.cpp).
checks.max_reference_mb = 4096
checks.reference_calls = 25

function checks.check_size(opts, with_reference)
  local calls = opts.warmup + math.max(opts.runs, opts.max_runs)
  local which = "--warmup + --max_runs"
  if with_reference and checks.reference_calls > calls then
    calls, which = checks.reference_calls, "the OpenBLAS reference's 5 warm-up + 20 timed"
  end
  local limit, why = checks.max_reference_mb * 2^20, "the evaluation's limit"
  local total = checks.meminfo("MemTotal")
  if total and total / 2 < limit then limit, why = total / 2, "half of MemTotal" end
  local bytes = calls * 4 * 8 * opts.size^2
  if bytes <= limit then return end
  cli.fail(string.format("--size=%d: at most %d here: %d calls (%s) each keep A, B, C and "
                         .. "|A||B| in doubles, %.0f MB in all, over %.0f MB (%s)", opts.size,
                         math.floor(math.sqrt(limit / (calls * 4 * 8))), calls, which,
                         bytes / 2^20, limit / 2^20, why))
end

-- A lower bound of the memory pol:sample needs, in bytes: it draws G completions of every
-- prompt of a call at once (engine/policy/generate.cpp), each row holding the key/value
-- cache of every layer for max_tokens tokens (the prompt's come on top), their attention
-- mask (fp32), and its logits and their probabilities (2 x vocab fp32). cfg: the model's
-- config.json. Nil when cfg lacks the dimensions.
function checks.sampling_bytes(cfg, opts, prompts_per_call)
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
function checks.check_memory(opts, dir, device)
  if device ~= "cpu" or not opts.G then return end
  local ok, cfg = pcall(json.read, dir .. "/config.json")
  if not ok or type(cfg) ~= "table" then return end
  local per_call = opts.prompts_per_step or 1  -- experiment 2 samples one prompt a call
  local need, row = checks.sampling_bytes(cfg, opts, per_call)
  local free = checks.meminfo("MemAvailable")
  if not (need and free) or need <= free then return end
  local most = math.floor(free / (per_call * row))
  cli.fail(string.format("--G=%d: %d completions x %d prompt(s) of up to %d tokens need at "
                         .. "least %.0f MB for the policy's key/value cache and logits "
                         .. "(%s), more than the %.0f MB free (MemAvailable): %s",
                         opts.G, opts.G, per_call, opts.max_tokens, need / 2^20, dir,
                         free / 2^20, most >= 1 and ("lower --G (at most " .. most .. ") or "
                                                     .. "--max_tokens") or "lower --max_tokens"))
end

-- --task=cuda:NAME (which only experiment1.lua's options take: options.check_cuda_task):
-- synchronous, and on a machine whose GPU the bench can use; refused before any run
-- directory is made, with the driver's reason.
function checks.check_cuda_task(opts, deps)
  local cuda_eval = require "method.cuda_eval"
  if not cuda_eval.task_name(opts.task) then return end
  if (opts.async or 0) ~= 0 then cli.fail("--task=" .. opts.task .. ": CUDA tasks are judged synchronously (--async=0)") end
  local gpu, why = cuda_eval.gpu(deps.bench)
  if not gpu then cli.fail("--task=" .. opts.task .. ": " .. why) end
end

-- --async=1 overlaps sampling with evaluation: the kernels must then be timed on other
-- cores than the sampler's, by benchmark workers.
function checks.check_async(opts, deps)
  if (opts.async or 0) == 0 then return end
  local engine_cluster = rawget(_G, "cluster")
  if deps.bench ~= rawget(_G, "bench") then return end  -- a stand-in bench times nothing
  if not (engine_cluster and engine_cluster.size() > 1) then
    cli.fail("--async=1 evaluates while the policy samples and trains: start benchmark "
             .. "workers with mpirun (docs/machines.md, 'On a cluster'), so that no kernel is timed "
             .. "on the cores the sampler uses")
  end
  if engine_cluster.shares_cores() then
    cli.fail("--async=1: a benchmark worker times kernels on this process's cores, where "
             .. "sampling and training would run meanwhile; give rank 0 cores of its own "
             .. "(ENGINE_RANK0_CORES=N on a shared node) or a node of its own")
  end
end

return checks
