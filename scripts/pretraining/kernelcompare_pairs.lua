-- KernelCompare's first phase (kernelcompare.lua): slow -> fast kernel pairs, each an SFT
-- example in experiment 3's later-turn format. Kernels of every technique set of the task
-- from kernelgen, judged on this machine as experiment 1 judges, and the verified samples
-- of earlier runs; a slower kernel paired with one at least --min_speedup times faster.

local cli = require "core.cli"
local evaluate = require "method.evaluate"
local feedback = require "method.feedback"
local kernelgen = require "kernelgen"
local kernelgen_tasks = require "kernelgen.tasks"
local outputs = require "core.outputs"
local prompts = require "method.prompts"
local split = require "method.heldout_split"
local stages = require "method.stages"
local stats = require "core.stats"

local M = {}

local path = outputs.path

local function fenced(code) return "```c\n" .. (code:gsub("%s+$", "")) .. "\n```" end

-- What feedback.text is told of a kernel of the run's task.
local function feedback_ctx(ctx, opts)
  return {roofline = ctx.roofline, threads = opts.threads > 0 and opts.threads or nil}
end

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
-- kernelgen/tasks/init.lua.
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

-- Judges the kernels on this machine in batches of `chunk`, as experiment 1 judges its
-- samples; each batch's results are appended to `file` (its first line: the settings they
-- were measured with) and reused after a kill for the kernels whose code is unchanged.
-- Returns the results, one per kernel.
local function measure(kernels, ctx, file, settings, chunk)
  local measured = {}
  local rows = outputs.read_jsonl(file)
  if rows[1] and outputs.same(rows[1].settings, settings) then
    for i = 2, #rows do
      local r = rows[i]
      if kernels[r.index] and kernels[r.index].code == r.code then measured[r.index] = r.result end
    end
  else
    outputs.write_jsonl(file, {{settings = settings}})
  end
  local todo = {}
  for i = 1, #kernels do if not measured[i] then todo[#todo + 1] = i end end
  if #todo > 0 then
    log.info("judging kernelgen's kernels", {kernels = #todo, reused = #kernels - #todo})
  end
  local f = assert(io.open(file, "a"))
  f:write("\n")  -- a line a kill cut short stays a line of its own, skipped when read
  for first = 1, #todo, chunk do
    local batch, texts = {}, {}
    for j = first, math.min(first + chunk - 1, #todo) do
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
-- evaluation, and the fast kernel as the answer. A pair that would hold an item of the
-- held-out split (heldout_split.lua: the task at a held-out size, say) is refused, named.
function M.example(slow, fast, ctx, opts)
  local said = feedback.text(slow.result, feedback_ctx(ctx, opts))
  local messages = prompts.refine(slow.code, said, ctx.task)
  local ex = {prompt = prompts.render(messages), completion = fenced(fast.code), feedback = said,
              slow = {source = slow.source, speed = slow.speed, techniques = slow.techniques},
              fast = {source = fast.source, speed = fast.speed, techniques = fast.techniques},
              speedup = fast.speed / slow.speed, unit = slow.result.unit or "GFLOPS"}
  cli.try(nil, split.check, {task = ctx.name, size = ctx.name == "matmul" and ctx.task or ctx.task.size,
                            isa = ctx.task.isa, messages = messages, completion = ex.completion},
          "kernelcompare's SFT pairs")
  return ex
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

-- The phase: OUT/pairs.jsonl and OUT/pairs.json; "complete" when it was already there.
function M.phase(opts, ctx, chunk)
  local from_dirs = opts.from ~= "" and M.from_runs(opts.from) or {}
  local settings = M.pairs_settings(opts, ctx, from_dirs)
  if outputs.matches(outputs.read_json(path(opts, "pairs.json")), settings, path(opts, "pairs.json")) then return "complete" end
  if opts.kernels > 0 and not M.generates(ctx.name) then
    log.warn("kernelgen writes no kernels of this task: the pairs come from --from alone", {task = ctx.name})
  end
  local kernels = M.generate(opts.kernels, ctx.name, ctx.isa, opts.seed)
  local measured = measure(kernels, ctx, path(opts, "pairs_measured.jsonl"), M.measure_settings(settings), chunk)
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
  outputs.write_jsonl(path(opts, "pairs.jsonl"), rows)
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

return M
