-- KernelCompare's recipe as one resumable pipeline: supervised fine-tuning on slow -> fast
-- kernel rewrites, then single-turn GRPO with the 0.4/0.4/0.2 reward (reward.kernelcompare:
-- compiles, correct, faster than the naive kernel), and four policies compared on held-out
-- prompts: the base model, SFT only, GRPO only, SFT then GRPO.
--
-- Phases (--phases; each writes into --out and skips itself when its output is complete,
-- so the same command after a kill continues where it stopped):
--   pairs    kernels of every technique set of the task from kernelgen, judged on this
--            machine as experiment 1 judges (evaluate.lua, wiring.bench_opts), and the
--            verified samples of earlier runs (--from); a slower kernel paired with one at
--            least --min_speedup times faster. Each pair is an SFT example in experiment 3's
--            later-turn format: prompts.refine(slow kernel, its feedback.text) -> the fast
--            kernel in a ```c block. OUT/pairs.jsonl, and OUT/pairs.json (the summary,
--            written last: the phase's mark of completion).
--   sft      train.sft on the pairs (a full fine-tune unless --sft_lora_r), checkpointed in
--            OUT/sft every --sft_save_every steps, exported to OUT/sft_model (Hugging Face
--            format, with sft.json written last).
--   grpo     experiment 1 with --reward=kernelcompare, lr = 0 and lr > 0 (--lr) over
--            --seeds: from the base model into OUT/grpo, from OUT/sft_model into
--            OUT/sft_grpo (each run resumes at its last committed step).
--   heldout  heldout.lua on each sweep, with the same held-out prompts and sampling seeds:
--            OUT/heldout_grpo.json (base against GRPO only) and OUT/heldout_sft_grpo.json
--            (SFT only against SFT then GRPO).
--   report   always, from what exists: OUT/report.md.
--
--   engine kernelcompare.lua                          # the default small model, every phase
--   engine kernelcompare.lua --from=runs/experiment1  # earlier runs' verified kernels too
--   engine kernelcompare.lua --phases=pairs,sft       # some phases (the report is always written)
--   engine kernelcompare.lua --model=DIR --profile=full
--
-- An output made with other options is refused, naming them: choose another --out.

local batches = require "batches"
local checks = require "checks"
local cli = require "cli"
local evaluate = require "evaluate"
local feedback = require "feedback"
local kernelgen = require "kernelgen"
local kernelgen_tasks = require "kernelgen.tasks"
local options = require "options"
local prompts = require "prompts"
local results = require "results"
local runs = require "runs"
local stages = require "stages"
local stats = require "stats"
local sweep = require "engine.sweep"
local wiring = require "wiring"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or engine.scripts[1]
local exp1 = dofile(here .. "/experiment1.lua")
local heldout = dofile(here .. "/heldout.lua")

local M = {}

M.phases = {"pairs", "sft", "grpo", "heldout", "report"}

-- Kernels judged per batch in the pairs phase: each batch's results are kept on disk
-- before the next starts, so a killed phase re-measures at most one batch.
M.chunk = 64

-- The pipeline's sweeps: experiment 1 from each starting model.
M.sweeps = {{name = "grpo", heldout = "heldout_grpo.json"}, {name = "sft_grpo", heldout = "heldout_sft_grpo.json"}}

-- --lr: the recipe compares learning with the lr = 0 run of each seed.
local function check_lrs(o)
  local zero, learns = false, false
  for _, lr in ipairs(o.lr or {}) do
    if lr == 0 then zero = true else learns = true end
  end
  if not (zero and learns) then
    return "--lr must hold 0 and at least one value above 0 (the held-out comparison sets "
      .. "each learning run against the lr = 0 run of its seed), got '" .. table.concat(o.lr or {}, ",") .. "'"
  end
end

M.spec = options.spec{
  description = "KernelCompare's recipe: SFT on slow -> fast kernel pairs, then single-turn "
    .. "GRPO with the 0.4/0.4/0.2 reward; the base model, SFT only, GRPO only and SFT then "
    .. "GRPO compared on held-out prompts. Resumable phase by phase.",
  options = {
    {"out", "runs/kernelcompare", "directory of every phase's output"},
    {"phases", {"pairs", "sft", "grpo", "heldout"}, "the phases to run, in this order "
     .. "(report.md is written whatever is chosen)", choices = M.phases},
    {"resume", false, "not needed: every phase continues what it finds in --out"},
    -- pairs
    {"kernels", 1024, "kernelgen kernels generated and judged for the pairs, going round the "
     .. "task's technique sets", min = 0},
    {"from", "", "also pair the verified samples of earlier runs: run directories or sweeps "
     .. "'DIR,DIR' (those of the same task and size)"},
    {"pairs", 512, "the most slow -> fast pairs kept", min = 1},
    {"min_speedup", 1.2, "a pair's fast kernel is at least this many times faster than its "
     .. "slow one", min = 1},
    -- sft
    {"sft_steps", 200, "SFT steps", min = 1},
    {"sft_lr", 1e-4, "SFT learning rate (constant)", above = 0},
    {"sft_batch", 16, "pairs per SFT step", min = 1},
    {"sft_micro_batch", 0, "pairs per forward/backward pass (0: the trainer's default)", min = 0},
    {"sft_lora_r", 0, "LoRA rank of the SFT (0: full fine-tuning; --lora_alpha and "
     .. "--lora_dropout apply)", min = 0},
    {"sft_max_len", 0, "longest pair in tokens, prompt and kernel (0: the model's "
     .. "max_position_embeddings); longer ones are left out", min = 0},
    {"sft_save_every", 50, "checkpoint the SFT every N steps", min = 1},
    {"sft_dtype", "bf16", "dtype of the exported SFT model", choices = {"fp32", "bf16", "fp16"}},
    -- grpo (experiment 1's)
    {"steps", 200, "GRPO steps per run", min = 1},
    {"prompts_per_step", 8, "fixed prompts (groups) per step, taken in turn", min = 1},
    {"opt", {"O3"}, "compiler levels to sweep (the pairs are timed at the first)",
     choices = {"O0", "O1", "O2", "O3"}},
    {"lr", {0.0, 3e-4}, "GRPO learning rates: 0 (the lr = 0 run of each seed) and at least one "
     .. "above 0", min = 0},
    {"beta", {0.0}, "KL coefficients to sweep", min = 0},
    {"seeds", "4", "every GRPO configuration once per seed: a list '1,2,3' or a count N",
     check = options.check_seeds},
    -- heldout
    {"heldout_G", 0, "completions per held-out prompt (0: the runs' G)", min = 0},
    {"heldout_size", 0, "matmul's held-out size (0: 1.5 times --size, a multiple of 16)", min = 0},
    {"heldout_tasks", "all", "the held-out tasks asked: all, none, or a list 'fft,conv1d'"},
  },
  check = check_lrs,
  profiles = {
    full = {},
    -- For the default small model on a laptop: experiment 1's small profile for GRPO, 256
    -- kernels for the pairs, and the SFT model exported in fp32, so that GRPO starts from
    -- the trained weights themselves (bf16 would round small updates away).
    small = {steps = 40, G = 16, prompts_per_step = 2, max_tokens = 512, size = 128, timeout = 2.0,
             runs = 2, opt = {"O3"}, lr = {0.0, 3e-4}, beta = {0.0}, seeds = "4", kernels = 256,
             sft_dtype = "fp32"},
  },
}

---------------------------------------------------------------------------------------
-- Small helpers: files, settings
---------------------------------------------------------------------------------------

local function path(opts, name) return opts.out .. "/" .. name end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- The top-level keys whose values differ, for the error that names them.
local function differences(a, b)
  local keys, seen = {}, {}
  for k in pairs(a) do seen[k] = true end
  for k in pairs(b) do seen[k] = true end
  for k in pairs(seen) do if not same(a[k], b[k]) then keys[#keys + 1] = tostring(k) end end
  table.sort(keys)
  return table.concat(keys, ", ")
end

-- A JSON file, or nil when there is none or it does not parse (a write cut by a kill).
local function read_json(file)
  if not sys.exists(file) then return nil end
  local ok, v = pcall(json.read, file)
  return ok and type(v) == "table" and v or nil
end

local function read_jsonl(file)
  local out = {}
  if not sys.exists(file) then return out end
  for line in io.lines(file) do
    local ok, v = pcall(json.decode, line)
    if ok and type(v) == "table" then out[#out + 1] = v end
  end
  return out
end

-- Writes lines of JSON whole or not at all (a temporary file renamed).
local function write_jsonl(file, rows)
  local tmp = file .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  for _, row in ipairs(rows) do f:write(json.encode(row), "\n") end
  f:close()
  assert(os.rename(tmp, file))
end

local function write_text(file, text)
  local tmp = file .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(text)
  f:close()
  assert(os.rename(tmp, file))
end

-- An output's settings against this command's: complete and the same (true), absent or
-- unfinished (false), or made with other options (refused).
local function matches(stored, settings, file)
  if not (stored and stored.complete) then return false end
  if same(stored.settings, settings) then return true end
  cli.fail(string.format("%s was made with other options (they differ in: %s): pass those, or "
                         .. "choose another --out", file, differences(stored.settings or {}, settings)))
end

local function fenced(code) return "```c\n" .. (code:gsub("%s+$", "")) .. "\n```" end

---------------------------------------------------------------------------------------
-- What every phase shares: the task, its benchmark options, the machine
---------------------------------------------------------------------------------------

-- The run's task as the prompts and the benchmark see it, at the first --opt level.
function M.context(opts, deps, raw_deps)
  if opts.task_list then
    cli.fail("--tasks: the pipeline runs one task (--task): --reward=kernelcompare compares with one task's seed kernel")
  end
  if opts.template == "model" then
    cli.fail("--template=model: the SFT prompts and the held-out comparison are rendered in ChatML (--template=chatml)")
  end
  local isa = prompts.isa(opts.isa, deps.bench)
  local view = setmetatable({isa = isa}, {__index = opts})
  local config = {opt = opts.opt[1]}
  local task = wiring.task(view, config)
  local machine = deps.bench.machine and checks.measuring_machine(deps) or nil
  local name = task.name or "matmul"
  return {deps = deps, raw_deps = raw_deps or {}, isa = isa, task = task, name = name,
          bench_opts = wiring.bench_opts(view, config), machine = machine,
          roofline = wiring.roofline(machine, name, opts.threads)}
end

-- What feedback.text is told of a kernel of the run's task.
local function feedback_ctx(ctx, opts)
  return {roofline = ctx.roofline, threads = opts.threads > 0 and opts.threads or nil}
end

---------------------------------------------------------------------------------------
-- Phase 1: pairs
---------------------------------------------------------------------------------------

-- The ISAs kernelgen writes intrinsics for; on another machine its kernels use no SIMD.
local kernelgen_isas = {avx512 = true, avx2 = true}

-- Every subset of `techniques` (SIMD only where kernelgen has the machine's intrinsics),
-- from none to all: the technique sets the generated kernels go round.
function M.technique_sets(techniques, isa)
  local usable = {}
  for _, t in ipairs(techniques) do
    if t ~= "simd" or kernelgen_isas[isa] then usable[#usable + 1] = t end
  end
  local sets = {}
  for mask = 0, (1 << #usable) - 1 do
    local set = {}
    for i, t in ipairs(usable) do if mask & (1 << (i - 1)) ~= 0 then set[#set + 1] = t end end
    sets[#sets + 1] = set
  end
  return sets
end

-- Whether kernelgen writes kernels of a task: matmul, and the training tasks of
-- kernelgen/tasks.lua.
function M.generates(name)
  if name == "matmul" then return true end
  for _, t in ipairs(kernelgen_tasks.tasks) do if t == name then return true end end
  return false
end

-- n kernels of the task, going round its technique sets, drawn from `seed`: each
-- {code =, techniques =, source = "kernelgen:i"}.
function M.generate(n, name, isa, seed)
  if n == 0 or not M.generates(name) then return {} end
  local simd_isa = kernelgen_isas[isa] and isa or nil
  local techniques = name == "matmul" and stages.techniques or kernelgen_tasks.techniques(name)
  local sets = M.technique_sets(techniques, simd_isa)
  local rng = kernelgen.rng(seed * 7919 + 31)
  local out = {}
  for i = 1, n do
    local set = sets[(i - 1) % #sets + 1]
    local k
    if name == "matmul" then
      k = kernelgen.kernel(rng, {allowed = set, require = set, isa = simd_isa})
    else
      k = kernelgen_tasks.kernel(rng, name, {allowed = set, require = set, isa = simd_isa or "avx2"})
    end
    out[i] = {code = k.code, techniques = k.techniques, source = "kernelgen:" .. i}
  end
  return out
end

-- What of a judged kernel the pairs keep: what feedback.text reads, and its speed.
local kept = {"status", "gflops", "speed", "unit", "times", "techniques", "counters",
              "counters_unavailable", "remarks", "message", "reason"}

local function kept_result(r)
  local out = {}
  for _, k in ipairs(kept) do out[k] = r[k] end
  return out
end

-- Judges the kernels on this machine in batches of M.chunk, as experiment 1 judges its
-- samples; each batch's results are appended to `file` (its first line: the settings they
-- were measured with) and reused after a kill for the kernels whose code is unchanged.
-- Returns the results, one per kernel.
local function measure(kernels, ctx, file, settings)
  local measured = {}
  local rows = read_jsonl(file)
  if rows[1] and same(rows[1].settings, settings) then
    for i = 2, #rows do
      local r = rows[i]
      if kernels[r.index] and kernels[r.index].code == r.code then measured[r.index] = r.result end
    end
  else
    write_jsonl(file, {{settings = settings}})
  end
  local todo = {}
  for i = 1, #kernels do if not measured[i] then todo[#todo + 1] = i end end
  if #todo > 0 then
    log.info("judging kernelgen's kernels", {kernels = #todo, reused = #kernels - #todo})
  end
  local f = assert(io.open(file, "a"))
  f:write("\n")  -- a line a kill cut short stays a line of its own, skipped when read
  for first = 1, #todo, M.chunk do
    local batch, texts = {}, {}
    for j = first, math.min(first + M.chunk - 1, #todo) do
      batch[#batch + 1] = todo[j]
      texts[#texts + 1] = fenced(kernels[todo[j]].code)
    end
    local judged = evaluate.completions(texts, {bench = ctx.deps.bench, bench_opts = ctx.bench_opts,
                                                task = ctx.task.name})
    for j, i in ipairs(batch) do
      measured[i] = kept_result(judged[j])
      f:write(json.encode({index = i, code = kernels[i].code, result = measured[i]}), "\n")
    end
    f:flush()
  end
  f:close()
  return measured
end

-- The run directories --from names: each DIR is a run (DIR/config.json) or holds runs.
function M.from_runs(text)
  local out = {}
  for dir in (text .. ","):gmatch("%s*([^,]-)%s*,") do
    if dir ~= "" then
      dir = dir:gsub("/+$", "")
      if not sys.exists(dir) then cli.fail("--from=" .. dir .. ": no such directory") end
      local found = {}
      if sys.exists(dir .. "/config.json") then
        found[1] = dir
      else
        local names = sys.listdir(dir)
        table.sort(names)
        for _, name in ipairs(names) do
          local d = dir .. "/" .. name
          if sys.exists(d .. "/config.json") and sys.exists(d .. "/run.sqlite") then found[#found + 1] = d end
        end
      end
      if #found == 0 then
        cli.fail("--from=" .. dir .. ": no runs there (neither " .. dir .. "/config.json nor "
                 .. dir .. "/<run>/config.json)")
      end
      for _, d in ipairs(found) do out[#out + 1] = d end
    end
  end
  return out
end

-- Whether a run (its config.json) measured the run's task at its size.
local function same_problem(identity, opts, ctx)
  if identity.tasks and identity.tasks ~= "" then return false, "a mixture (--tasks)" end
  local task = (identity.task == nil or identity.task == "") and "matmul" or identity.task
  if task ~= ctx.name then return false, "task " .. task end
  if ctx.name == "matmul" and identity.size ~= opts.size then return false, "size " .. tostring(identity.size) end
  if ctx.name ~= "matmul" and identity.task_size ~= opts.task_size then
    return false, "size " .. tostring(identity.task_size)
  end
  return true
end

-- The verified samples of the runs --from names, of the same task and size, each with
-- its code, its stored speed and what feedback.text reads of it.
local function earlier_samples(dirs, opts, ctx)
  local out = {}
  for _, dir in ipairs(dirs) do
    local run = store.open(dir, {read_only = true})
    local fits, why = same_problem(run:config(), opts, ctx)
    if not fits then
      log.warn("--from: a run of another problem is left out", {run = dir, why = why})
    else
      for _, s in ipairs(run:samples{status = "ok"}) do
        local extra = s.extra or {}
        local speed = extra.speed or s.gflops
        if s.code and s.code ~= "" and type(speed) == "number" then
          out[#out + 1] = {code = s.code, techniques = extra.techniques, source = dir .. "#" .. s.id,
                           result = {status = "ok", gflops = s.gflops, speed = extra.speed, unit = extra.unit,
                                     times = s.timings and s.timings.times, techniques = extra.techniques}}
        end
      end
    end
    run:close()
  end
  return out
end

-- The verified kernels, once per normal form (evaluate.normal_form), slowest first.
local function candidates(list)
  local out, seen = {}, {}
  for _, k in ipairs(list) do
    local speed = k.result.status == "ok" and (k.result.speed or k.result.gflops) or nil
    local key = evaluate.normal_form(k.code)
    if speed and speed > 0 and not seen[key] then
      seen[key] = true
      k.speed = speed
      out[#out + 1] = k
    end
  end
  table.sort(out, function(a, b)
    if a.speed ~= b.speed then return a.speed < b.speed end
    return a.source < b.source
  end)
  return out
end

-- Up to `most` pairs (slow, fast) of kernels sorted by speed, fast at least `ratio` times
-- faster, drawn from rng: rounds over the slow kernels in a shuffled order, each taking a
-- partner it has not had, drawn uniformly among those fast enough, so the pairs spread
-- over every slow kernel before any gets a second. Returns the pairs (indices) and how many
-- were possible.
function M.draw_pairs(speeds, ratio, most, rng)
  local n = #speeds
  local slots, possible = {}, 0
  local first = 1
  for s = 1, n do
    while first <= n and speeds[first] < ratio * speeds[s] do first = first + 1 end
    local lo = math.max(first, s + 1)
    if lo <= n then
      slots[#slots + 1] = {slow = s, lo = lo, count = n - lo + 1, used = 0, swap = {}}
      possible = possible + n - lo + 1
    end
  end
  for i = #slots, 2, -1 do
    local j = rng:int(1, i)
    slots[i], slots[j] = slots[j], slots[i]
  end
  local out = {}
  while #out < most and #slots > 0 do
    local left = {}
    for _, slot in ipairs(slots) do
      if #out >= most then break end
      -- a partner not yet drawn: Fisher-Yates over the slot's range, kept sparse
      local k = rng:int(slot.used + 1, slot.count)
      local pick = slot.swap[k] or k
      slot.swap[k] = slot.swap[slot.used + 1] or (slot.used + 1)
      slot.used = slot.used + 1
      out[#out + 1] = {slot.slow, slot.lo + pick - 1}
      if slot.used < slot.count then left[#left + 1] = slot end
    end
    slots = left
  end
  return out, possible
end

-- One pair as an SFT example: experiment 3's later-turn prompt on the slow kernel and its
-- evaluation, and the fast kernel as the answer.
function M.example(slow, fast, ctx, opts)
  local said = feedback.text(slow.result, feedback_ctx(ctx, opts))
  local messages = prompts.refine(slow.code, said, ctx.task)
  return {prompt = prompts.render(messages), completion = fenced(fast.code), feedback = said,
          slow = {source = slow.source, speed = slow.speed, techniques = slow.techniques},
          fast = {source = fast.source, speed = fast.speed, techniques = fast.techniques},
          speedup = fast.speed / slow.speed, unit = slow.result.unit or "GFLOPS"}
end

-- What the pairs are made from: an output made with other settings is refused.
function M.pairs_settings(opts, ctx, from_dirs)
  local b = ctx.bench_opts
  return {task = ctx.name, problem = b.problem, opt = b.opt, isa = ctx.isa, threads = opts.threads,
          timeout = b.timeout, warmup = b.warmup, runs = b.runs, max_runs = b.max_runs,
          cov_target = b.cov_target, verify = b.verify, kernels = opts.kernels, pairs = opts.pairs,
          min_speedup = opts.min_speedup, seed = opts.seed, from = from_dirs}
end

-- What the measurements depend on: the pairs' settings but how they are drawn.
function M.measure_settings(settings)
  local out = {}
  for k, v in pairs(settings) do out[k] = v end
  out.pairs, out.min_speedup, out.from = nil, nil, nil
  return out
end

local function pairs_phase(opts, ctx)
  local from_dirs = opts.from ~= "" and M.from_runs(opts.from) or {}
  local settings = M.pairs_settings(opts, ctx, from_dirs)
  if matches(read_json(path(opts, "pairs.json")), settings, path(opts, "pairs.json")) then return "complete" end
  if opts.kernels > 0 and not M.generates(ctx.name) then
    log.warn("kernelgen writes no kernels of this task: the pairs come from --from alone", {task = ctx.name})
  end
  local kernels = M.generate(opts.kernels, ctx.name, ctx.isa, opts.seed)
  local measured = measure(kernels, ctx, path(opts, "pairs_measured.jsonl"), M.measure_settings(settings))
  local statuses = {}
  for i, k in ipairs(kernels) do
    k.result = measured[i]
    statuses[k.result.status] = (statuses[k.result.status] or 0) + 1
  end
  local earlier = earlier_samples(from_dirs, opts, ctx)
  local all = {}
  for _, k in ipairs(kernels) do all[#all + 1] = k end
  for _, k in ipairs(earlier) do all[#all + 1] = k end
  local pool = candidates(all)
  local speeds = {}
  for i, k in ipairs(pool) do speeds[i] = k.speed end
  local drawn, possible = M.draw_pairs(speeds, opts.min_speedup, opts.pairs, kernelgen.rng(opts.seed * 104729 + 7))
  if #drawn == 0 then
    cli.fail(string.format("no pairs: %d verified kernels, none %.2f times faster than another "
                           .. "(--kernels, --from, --min_speedup)", #pool, opts.min_speedup))
  end
  local rows, speedups, lo, hi = {}, {}, math.huge, 0
  for i, p in ipairs(drawn) do
    rows[i] = M.example(pool[p[1]], pool[p[2]], ctx, opts)
    speedups[i] = rows[i].speedup
    lo, hi = math.min(lo, speedups[i]), math.max(hi, speedups[i])
  end
  write_jsonl(path(opts, "pairs.jsonl"), rows)
  local verified = statuses.ok or 0
  json.write(path(opts, "pairs.json"), {
    settings = settings, complete = true, pairs = #rows, possible = possible,
    kernels = {generated = #kernels, verified = verified, statuses = statuses},
    earlier = {runs = #from_dirs, samples = #earlier}, candidates = #pool,
    speedup = {median = stats.median(speedups), min = lo, max = hi},
    unit = rows[1].unit})
  log.info("pairs", {pairs = #rows, possible = possible, kernels = #kernels, verified = verified,
                     earlier = #earlier, median_speedup = string.format("%.2f", stats.median(speedups))})
  return "done"
end

---------------------------------------------------------------------------------------
-- Phase 2: sft
---------------------------------------------------------------------------------------

-- The pairs of a complete pairs phase, as the SFT trainer takes them.
local function read_pairs(opts)
  local summary = read_json(path(opts, "pairs.json"))
  if not (summary and summary.complete) then
    cli.fail(path(opts, "pairs.json") .. " is missing: run the pairs phase first (--phases=pairs,...)")
  end
  local examples = {}
  for i, row in ipairs(read_jsonl(path(opts, "pairs.jsonl"))) do
    examples[i] = {prompt = row.prompt, completion = row.completion}
  end
  if #examples ~= summary.pairs then
    cli.fail(string.format("%s holds %d pairs, pairs.json says %d: remove pairs.json to make them again",
                           path(opts, "pairs.jsonl"), #examples, summary.pairs))
  end
  return examples, summary
end

-- The longest example the model takes: --sft_max_len, else its max_position_embeddings.
local function max_len(opts, model)
  if opts.sft_max_len > 0 then return opts.sft_max_len end
  local config = read_json(model .. "/config.json")
  return config and config.max_position_embeddings
end

-- Leaves out the examples longer than the model takes, counted with its tokenizer (the
-- engine's; a stand-in's when the primitives are, and none without one).
local function fitting(examples, opts, ctx, model)
  local tok_module = ctx.raw_deps.tokenizer or (not ctx.deps.injected and (rawget(_G, "tokenizer")
                     or package.loaded["engine.tokenizer"])) or nil
  local limit = max_len(opts, model)
  if not (tok_module and limit) then return examples, 0 end
  local tok = cli.try("cannot load the tokenizer of " .. model, tok_module.load, model)
  local kept_, dropped = {}, 0
  for _, e in ipairs(examples) do
    if #tok:encode(e.prompt) + #tok:encode(e.completion) + 1 <= limit then kept_[#kept_ + 1] = e
    else dropped = dropped + 1 end
  end
  if dropped > 0 then log.warn("pairs longer than the model takes are left out", {dropped = dropped, limit = limit}) end
  if #kept_ == 0 then cli.fail("every pair is longer than " .. limit .. " tokens (--sft_max_len)") end
  return kept_, dropped
end

-- The SFT trainer's options: the full model unless --sft_lora_r.
local function sft_train_opts(opts)
  local t = {lr = opts.sft_lr, seed = opts.seed}
  if opts.sft_micro_batch > 0 then t.micro_batch = opts.sft_micro_batch end
  t.lora = wiring.lora(opts, opts.sft_lora_r)
  return t
end

-- What makes the SFT model: the pairs, the base model and the SFT options.
function M.sft_settings(opts, pairs_summary)
  return {experiment = "kernelcompare_sft", pairs = pairs_summary.settings, model = wiring.model_dir(opts, {injected = true}),
          steps = opts.sft_steps, lr = opts.sft_lr, batch = opts.sft_batch, micro_batch = opts.sft_micro_batch,
          lora_r = opts.sft_lora_r, lora_alpha = opts.sft_lora_r > 0 and opts.lora_alpha or nil,
          lora_dropout = opts.sft_lora_r > 0 and opts.lora_dropout or nil, max_len = opts.sft_max_len,
          seed = opts.seed, dtype = opts.dtype, export_dtype = opts.sft_dtype}
end

-- The SFT losses the run recorded, by step (the last record of a step repeated after a
-- resume wins).
local function sft_losses(dir)
  local by_step, last = {}, 0
  for _, rec in ipairs(read_jsonl(dir .. "/metrics.jsonl")) do
    if type(rec.step) == "number" and type(rec.loss) == "number" then
      by_step[rec.step] = rec.loss
      last = math.max(last, rec.step)
    end
  end
  return by_step, last
end

local function sft_readme(opts, figures)
  return table.concat({
    "# SFT model of the KernelCompare pipeline",
    "",
    string.format("The model %s fine-tuned on %d slow -> fast kernel pairs (`pairs.jsonl` beside",
                  figures.base, figures.examples),
    "this directory): each prompt is experiment 3's later-turn prompt (`prompts.refine`: the",
    "slower kernel and what its evaluation said), each answer the faster kernel.",
    "",
    string.format("- %d steps of %d pairs, learning rate %g (constant), %s", opts.sft_steps,
                  math.min(opts.sft_batch, figures.examples), opts.sft_lr,
                  opts.sft_lora_r > 0 and ("LoRA rank " .. opts.sft_lora_r .. ", merged") or "full fine-tuning"),
    string.format("- loss %.4f at step 1, %.4f at step %d", figures.first_loss or 0, figures.last_loss or 0,
                  figures.steps),
    "",
    "`sft.json` holds the settings and figures; `engine kernelcompare.lua` made it.",
    "",
  }, "\n")
end

local function sft_phase(opts, ctx)
  local examples, summary = read_pairs(opts)
  local settings = M.sft_settings(opts, summary)
  local model_out = path(opts, "sft_model")
  if matches(read_json(model_out .. "/sft.json"), settings, model_out .. "/sft.json") then return "complete" end
  local pol, model = wiring.load_policy(opts, ctx.deps)
  local fit, dropped = fitting(examples, opts, ctx, model)
  local run <close> = runs.open_run(path(opts, "sft"), settings, {resume = true})
  local trainer = ctx.deps.train.sft(pol, sft_train_opts(opts))
  local done = run:get("step", 0)
  if done > 0 then
    local saved = run:checkpoint_path(run:get("checkpoint"))
    cli.try(string.format("cannot resume %s from its checkpoint %s", path(opts, "sft"), saved),
            trainer.load, trainer, saved)
    done = trainer:steps()
    log.info("resumed the SFT", {step = done})
  end
  -- the pairs in a permutation per epoch drawn from --seed (batches.lua), so that a
  -- resumed run trains on what an uninterrupted one would
  local cache = {}
  for step = done + 1, opts.sft_steps do
    local stats_ = trainer:step(batches.at(fit, step, opts.sft_batch, opts.seed * 7919 + 1000, cache))
    local save = step % opts.sft_save_every == 0 or step == opts.sft_steps
    run:atomic(function()
      run:log{step = step, loss = stats_.loss, lr = stats_.lr, tokens = stats_.tokens,
              grad_norm = stats_.grad_norm, seconds = stats_.seconds}
      if save then
        local name = "step-" .. step
        trainer:save(run:begin_checkpoint(name))
        run:commit_checkpoint(name)
        run:set("checkpoint", name)
        run:set("step", step)
      end
    end)
    if step % 25 == 0 or step == opts.sft_steps then
      log.info("sft", {step = step, loss = string.format("%.4f", stats_.loss)})
    end
  end
  local losses, last = sft_losses(path(opts, "sft"))
  local figures = {examples = #fit, dropped = dropped, steps = opts.sft_steps, first_loss = losses[1],
                   last_loss = losses[last], base = model}
  os.remove(model_out .. "/sft.json")  -- written again last: the export's mark of completion
  trainer:export(model_out, {dtype = opts.sft_dtype})
  write_text(model_out .. "/README.md", sft_readme(opts, figures))
  json.write(model_out .. "/sft.json", {settings = settings, figures = figures, complete = true})
  log.info("exported the SFT model", {dir = model_out, loss = figures.last_loss})
  return "done"
end

---------------------------------------------------------------------------------------
-- Phase 3: grpo
---------------------------------------------------------------------------------------

-- Experiment 1's options for one sweep: this command's values of every option experiment
-- 1 has, with the KernelCompare reward, the sweep's model and directory. The runs always
-- resume (a run made with other options is refused by experiment 1).
function M.grpo_opts(opts, model, out)
  local o = {}
  for _, d in ipairs(exp1.spec.options) do o[d[1]] = opts[d[1]] end
  o.out, o.model, o.reward, o.resume = out, model, "kernelcompare", true
  o.seed_list, o.profile, o._given = opts.seed_list, opts.profile, {}
  return o
end

-- Each sweep's options: the base model into OUT/grpo (opts.model, nil for the default
-- one), the SFT model into OUT/sft_grpo.
function M.sweep_opts(opts, name)
  local model = path(opts, "sft_model")
  if name == "grpo" then model = opts.model end
  return M.grpo_opts(opts, model, path(opts, name))
end
local sweep_opts = M.sweep_opts

-- Whether every run of a sweep has its steps, with the options it would be made with now.
function M.sweep_done(o, ctx)
  local view = {}
  for k, v in pairs(o) do view[k] = v end
  view.isa = ctx.isa  -- as experiment 1 records it: the machine's for auto
  for _, config in ipairs(exp1.configs(o)) do
    local dir = o.out .. "/" .. sweep.name(config)
    local stored = read_json(dir .. "/config.json")
    if not stored then return false end
    local identity = runs.as_stored(runs.identity("experiment1", runs.run_opts(view, config), config), stored)
    for k, v in pairs(identity) do if not same(v, stored[k]) then return false end end
    local run = store.open(dir, {read_only = true})
    local step = run:get("step", 0)
    run:close()
    if step < o.steps then return false end
  end
  return true
end

local function sft_model_ready(opts)
  local mark = read_json(path(opts, "sft_model/sft.json"))
  return mark and mark.complete
end

local function grpo_phase(opts, ctx)
  local outcome = {}
  for _, s in ipairs(M.sweeps) do
    local o = sweep_opts(opts, s.name)
    if M.sweep_done(o, ctx) then
      outcome[#outcome + 1] = s.name .. " complete"
    else
      log.info("GRPO sweep", {sweep = s.name, model = o.model or wiring.default_model})
      exp1.run(o, ctx.deps)
      outcome[#outcome + 1] = s.name .. " done"
    end
  end
  return table.concat(outcome, ", ")
end

---------------------------------------------------------------------------------------
-- Phase 4: heldout
---------------------------------------------------------------------------------------

-- What a held-out comparison depends on beyond its runs.
local function heldout_settings(opts)
  return {G = opts.heldout_G, heldout_size = opts.heldout_size, heldout_tasks = opts.heldout_tasks,
          steps = opts.steps, seeds = opts.seed_list}
end

-- heldout.lua's command line for one sweep: its prompts and seeds are the same for both.
local function heldout_argv(opts, s)
  local argv = {[0] = "heldout.lua", path(opts, s.name), "--out=" .. path(opts, s.heldout),
                "--device=" .. opts.device, "--G=" .. opts.heldout_G,
                "--heldout_size=" .. opts.heldout_size, "--heldout_tasks=" .. opts.heldout_tasks}
  -- a list of two or more (one seed alone: its only runs, whatever their seed)
  if #opts.seed_list > 1 then argv[#argv + 1] = "--seeds=" .. table.concat(opts.seed_list, ",") end
  return argv
end

local function heldout_phase(opts, ctx)
  local outcome = {}
  local settings = heldout_settings(opts)
  for _, s in ipairs(M.sweeps) do
    local file = path(opts, s.heldout)
    if matches(read_json(file), settings, file) then
      outcome[#outcome + 1] = s.heldout .. " complete"
    else
      if not M.sweep_done(sweep_opts(opts, s.name), ctx) then
        cli.fail(path(opts, s.name) .. " has runs without all their steps: run the grpo phase first (--phases=grpo,heldout)")
      end
      heldout.main(heldout_argv(opts, s), ctx.deps)
      local data = json.read(file)
      data.settings = settings
      json.write(file, data)
      outcome[#outcome + 1] = s.heldout .. " done"
    end
  end
  return table.concat(outcome, ", ")
end

---------------------------------------------------------------------------------------
-- Phase 5: report
---------------------------------------------------------------------------------------

-- The four policies: which comparison holds each, and as which of its two policies.
M.policies = {
  {name = "base model", file = "heldout_grpo.json", side = "base"},
  {name = "SFT only", file = "heldout_sft_grpo.json", side = "base"},
  {name = "GRPO only", file = "heldout_grpo.json", side = "learned"},
  {name = "SFT then GRPO", file = "heldout_sft_grpo.json", side = "learned"},
}

-- The differences the recipe asks about, each a policy minus the base model.
M.differences = {{"SFT only", "base model"}, {"GRPO only", "base model"}, {"SFT then GRPO", "base model"}}

-- The figures the report gives, with how a value is shown.
M.figures = {{key = "roofline", name = "roofline score", scale = 1, unit = "%"},
             {key = "ok", name = "verified share", scale = 100, unit = "%"}}

-- Per learning configuration, per policy, per seed: the figures of each part and overall.
-- {[configuration] = {[policy] = {[seed] = {overall =, parts = {[part] = figures}}}}},
-- with the parts and the comparisons' machines.
function M.collect(out)
  local by_config, parts, machines = {}, nil, {}
  for _, p in ipairs(M.policies) do
    local data = read_json(out .. "/" .. p.file)
    if data and data.complete then
      parts = parts or data.parts
      machines[p.file] = data.machine
      for _, rec in ipairs(data.seeds or {}) do
        local key = rec.configuration or rec.run
        by_config[key] = by_config[key] or {}
        local per = by_config[key]
        per[p.name] = per[p.name] or {}
        local entry = {overall = rec.overall and rec.overall[p.side], parts = {}}
        for name, f in pairs(rec.parts or {}) do entry.parts[name] = f[p.side] end
        per[p.name][rec.seed] = entry
      end
    end
  end
  return by_config, parts or {}, machines
end

-- One figure of one scope over the seeds: {[seed] = value}.
local function values_of(per_seed, scope, key, scale)
  local out = {}
  for seed, e in pairs(per_seed or {}) do
    local f = scope == "overall" and e.overall or e.parts[scope]
    if f and type(f[key]) == "number" then out[seed] = f[key] * scale end
  end
  return out
end

local function list_of(by_seed)
  local seeds, values = {}, {}
  for seed in pairs(by_seed) do seeds[#seeds + 1] = seed end
  table.sort(seeds)
  for i, seed in ipairs(seeds) do values[i] = by_seed[seed] end
  return values, seeds
end

-- "mean ± half (n)" of a figure over the seeds.
local function cell(by_seed)
  local values = list_of(by_seed)
  local iv = stats.interval(values)
  if iv.n == 0 then return "-" end
  return results.pm(iv, "%.2f") .. string.format(" (%d)", iv.n)
end

-- The table of the four policies for one learning configuration.
local function policy_table(per, parts)
  local scopes = {}
  for _, p in ipairs(parts) do scopes[#scopes + 1] = p end
  scopes[#scopes + 1] = "overall"
  local head, align = {"policy"}, {"---"}
  for _, scope in ipairs(scopes) do
    for _, f in ipairs(M.figures) do
      head[#head + 1], align[#align + 1] = scope .. ": " .. f.name .. " (" .. f.unit .. ")", "---:"
    end
  end
  local lines = {"| " .. table.concat(head, " | ") .. " |", "| " .. table.concat(align, " | ") .. " |"}
  for _, p in ipairs(M.policies) do
    local cells = {p.name}
    for _, scope in ipairs(scopes) do
      for _, f in ipairs(M.figures) do cells[#cells + 1] = cell(values_of(per[p.name], scope, f.key, f.scale)) end
    end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return lines, scopes
end

-- a - b by seed, over the seeds both have.
local function paired(a, b)
  local out = {}
  for seed, v in pairs(a) do if b[seed] then out[seed] = v - b[seed] end end
  return out
end

-- The table of the three differences by seed, each figure and scope, with the 95% t
-- interval and the exact sign and permutation tests.
local function difference_table(per, scopes)
  local lines = {"| difference | scope | figure | by seed | mean ± 95% | sign test | permutation |",
                 "| --- | --- | --- | --- | ---: | ---: | ---: |"}
  for _, d in ipairs(M.differences) do
    for _, scope in ipairs(scopes) do
      for _, f in ipairs(M.figures) do
        local diff = paired(values_of(per[d[1]], scope, f.key, f.scale), values_of(per[d[2]], scope, f.key, f.scale))
        local values, seeds = list_of(diff)
        if #values > 0 then
          local shown = {}
          for i, v in ipairs(values) do shown[i] = string.format("%d: %+.2f", seeds[i], v) end
          local sign, perm = stats.sign_test(values), stats.permutation_test(values)
          local tests = sign.n == 0 and "no nonzero difference | -"
            or string.format("%d of %d positive, p = %.3g | p = %.3g%s", sign.positive, sign.n, sign.p, perm.p,
                             perm.exact and "" or " (sampled)")
          lines[#lines + 1] = string.format("| %s − %s | %s | %s (points) | %s | %s | %s |", d[1], d[2], scope,
            f.name, table.concat(shown, ", "), results.pm(stats.interval(values), "%+.2f"), tests)
        end
      end
    end
  end
  return lines
end

-- The pairs and the SFT, in a few lines.
local function inputs_text(out)
  local lines = {}
  local p = read_json(out .. "/pairs.json")
  if p and p.complete then
    lines[#lines + 1] = string.format("- **Pairs** (`pairs.jsonl`): %d, drawn from %d possible among %d verified "
      .. "kernels (%d of %d kernelgen kernels verified on this machine; %d samples of %d earlier runs); "
      .. "median speedup %.2f (%.2f to %.2f), at least %.2f; %s at %s.",
      p.pairs, p.possible, p.candidates, p.kernels.verified, p.kernels.generated, p.earlier.samples,
      p.earlier.runs, p.speedup.median, p.speedup.min, p.speedup.max, p.settings.min_speedup,
      p.settings.task, p.settings.opt)
  else
    lines[#lines + 1] = "- **Pairs**: not made yet (phase pairs)."
  end
  local s = read_json(out .. "/sft_model/sft.json")
  if s and s.complete then
    lines[#lines + 1] = string.format("- **SFT** (`sft_model/`): %d steps of %d pairs at lr %g from %s; loss %.4f at "
      .. "step 1, %.4f at step %d%s.", s.settings.steps, s.settings.batch, s.settings.lr, s.figures.base,
      s.figures.first_loss or 0, s.figures.last_loss or 0, s.figures.steps,
      (s.figures.dropped or 0) > 0 and string.format(" (%d pairs too long left out)", s.figures.dropped) or "")
  else
    local losses, last = sft_losses(out .. "/sft")
    lines[#lines + 1] = last > 0
      and string.format("- **SFT**: unfinished, step %d; loss %.4f at step 1, %.4f at step %d.", last,
                        losses[1] or 0, losses[last], last)
      or "- **SFT**: not run yet (phase sft)."
  end
  return lines
end

function M.report_text(out)
  local lines = {
    "# KernelCompare: SFT on slow → fast rewrites, then GRPO with the 0.4/0.4/0.2 reward",
    "",
    "Written by `engine kernelcompare.lua` from what `" .. out .. "` holds.",
    "",
  }
  for _, l in ipairs(inputs_text(out)) do lines[#lines + 1] = l end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "## Held-out prompts"
  lines[#lines + 1] = ""
  local by_config, parts, machines = M.collect(out)
  local keys = results.sorted_keys(by_config)
  if #keys == 0 then
    lines[#lines + 1] = "No held-out comparison yet (phases grpo and heldout)."
    return table.concat(lines, "\n") .. "\n"
  end
  lines[#lines + 1] = "Base model and GRPO only come from `heldout_grpo.json`, SFT only and SFT then GRPO "
    .. "from `heldout_sft_grpo.json`: each comparison times its two policies' kernels side by side, "
    .. "but the two comparisons are timed in separate batches, so SFT only − base model and SFT then "
    .. "GRPO − base model also carry any drift of the machine's speed between them (the verified "
    .. "share does not depend on timing). Both ask the same prompts with the same sampling seeds."
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Cells: mean ± half-width of the 95% t interval over the seeds (number of seeds). "
    .. "The roofline score is a kernel's speed as a percentage of its task's roofline on the measuring "
    .. "machine (0 when not verified); \"overall\" is the mean of the parts."
  local any_machine = next(machines) and machines[next(machines)]
  lines[#lines + 1] = heldout.rooflines_text(any_machine)
  for _, key in ipairs(keys) do
    lines[#lines + 1] = ""
    lines[#lines + 1] = "### `" .. key .. "`"
    lines[#lines + 1] = ""
    local table_, scopes = policy_table(by_config[key], parts)
    for _, l in ipairs(table_) do lines[#lines + 1] = l end
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Differences by seed (points), with the exact two-sided sign and permutation tests:"
    lines[#lines + 1] = ""
    for _, l in ipairs(difference_table(by_config[key], scopes)) do lines[#lines + 1] = l end
  end
  return table.concat(lines, "\n") .. "\n"
end

local function report_phase(opts)
  write_text(path(opts, "report.md"), M.report_text(opts.out))
  return path(opts, "report.md")
end

---------------------------------------------------------------------------------------
-- The pipeline
---------------------------------------------------------------------------------------

-- A phase that needs an earlier one's output, neither chosen nor there, is refused before
-- anything runs.
local function check_order(opts, ctx, chosen)
  local function need(phase, ready, what)
    if chosen[phase] and not ready then
      cli.fail(string.format("--phases: the %s phase needs %s; add it to --phases", phase, what))
    end
  end
  local pairs_ready = chosen.pairs or (read_json(path(opts, "pairs.json")) or {}).complete
  need("sft", pairs_ready, "the pairs (phase pairs)")
  need("grpo", chosen.sft or sft_model_ready(opts), "the SFT model (phase sft)")
  local sweeps_ready = chosen.grpo or (M.sweep_done(sweep_opts(opts, "grpo"), ctx)
                                       and M.sweep_done(sweep_opts(opts, "sft_grpo"), ctx))
  need("heldout", sweeps_ready, "finished GRPO runs (phase grpo)")
end

M.run_phase = {pairs = pairs_phase, sft = sft_phase, grpo = grpo_phase, heldout = heldout_phase}

-- Runs the chosen phases in order (deps: the primitives, wiring.lua; a stand-in tokenizer
-- as deps.tokenizer), then writes the report. Returns what each phase did.
function M.run(opts, deps)
  local raw = deps or {}
  deps = wiring.deps(deps)
  local chosen = {}
  for _, p in ipairs(opts.phases) do chosen[p] = true end
  local ctx = M.context(opts, deps, raw)
  -- what a later phase would refuse, refused before anything runs
  if chosen.pairs and opts.from ~= "" then M.from_runs(opts.from) end
  if chosen.heldout then
    heldout.heldout_task_names(opts.heldout_tasks)
    if ctx.name == "matmul" and heldout.heldout_size(opts.size, opts.heldout_size) == opts.size then
      cli.fail("--heldout_size=" .. opts.heldout_size .. " is --size: the held-out prompts ask another size")
    end
  end
  check_order(opts, ctx, chosen)
  sys.mkdir(opts.out)
  local outcome = {}
  for _, phase in ipairs(M.phases) do
    if chosen[phase] and M.run_phase[phase] then
      log.info("phase", {phase = phase})
      outcome[phase] = M.run_phase[phase](opts, ctx)
      collectgarbage("collect")  -- a phase's policy and trainer go before the next loads its own
    end
  end
  outcome.report = report_phase(opts)
  return outcome
end

function M.main(argv)
  local opts = options.parse(argv, M.spec)
  local outcome = M.run(opts)
  for _, phase in ipairs(M.phases) do
    if outcome[phase] then print(string.format("%-8s %s", phase, outcome[phase])) end
  end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
