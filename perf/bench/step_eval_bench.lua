-- One step's evaluation, as Experiment 1 has it: the default model samples G completions
-- for each of the step's fixed prompts, and the whole step is judged in one batch by three
-- paths with a full pool waiting for the compiles under way, taking turns: every kernel
-- compiled and run (the evaluation before any sharing), kernels of the same text measured
-- once ("text"), and besides that kernels of the same object code run once ("text +
-- code"), and the first and the last again as the engine judges by default, the compiles
-- under way held stopped while a full pool runs (hold), and the first of those with the
-- loads and checks between calls split over the calls' threads ("every, held, split";
-- --waiting=false times only these three); with --pools, the first and the last again
-- with other sizes of the pool of compiled kernels that take turns (32 by default). Prints
-- each path's wall time, what it compiled and ran, where the time went (the compile phases
-- and how busy they kept the cores, the serialised run phases split into the calls, the
-- checks between them and the rest), the step's limit (the compiles at full occupancy plus
-- the calls) and the wall against it, where the wall outside both phases went, and whether
-- every kernel got the same status on every path. --save keeps the sampled completions and
-- --completions judges a saved step instead of sampling one (a machine without the model).
--
--   build/engine perf/bench/step_eval_bench.lua [--prompts=8 --G=64 --max_tokens=512]
--     [--size=256] [--rounds=1] [--pools=128] [--model=models/small] [--device=auto]
--     [--save=FILE | --completions=FILE] [--waiting=false]
local args = require "engine.args"
local evaluate = require "method.evaluate"
local prompts = require "method.prompts"
local stats = require "core.stats"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "One step's evaluation with and without sharing (engine.bench)",
  options = {
    perf.prompts(8),
    perf.G(64),
    perf.max_tokens(),
    perf.size(256, 16),
    {"rounds", 1, "evaluations of the step by each path", min = 1},
    perf.threads(),
    {"pools", "", "other sizes of the pool of compiled kernels to time both ends with, e.g. 128", type = "string"},
    {"waiting", true, "time the three paths whose pool waits for the compiles under way"},
    {"seed", 1, "sampling seed", min = 0},
    perf.model(),
    {"device", "auto", "auto (CUDA when present), cpu, cuda", type = "string"},
    {"save", "", "write the sampled completions to this JSONL file", type = "string"},
    {"completions", "", "judge the completions of this JSONL file (--save's) instead of sampling", type = "string"},
  },
})

local m = bench.machine()
local outputs = require "core.outputs"
local completions, source
if opts.completions ~= "" then
  completions, source = {}, "read from " .. opts.completions
  for i, row in ipairs(outputs.read_jsonl(opts.completions)) do completions[i] = row.text end
else
  local device = perf.device(opts.device)
  local pol = policy.load(opts.model, {device = device})
  local fixed = prompts.fixed_list({"matmul"}, {matmul = nil})
  local texts = {}
  for i, p in ipairs(prompts.of_step(fixed, 1, opts.prompts)) do texts[i] = prompts.render(p.messages) end
  local t0 = sys.now()
  local groups = pol:sample(texts, {n = opts.G, temperature = 1.0, top_p = 1.0, max_tokens = opts.max_tokens,
                                    seed = opts.seed})
  completions = {}
  for _, g in ipairs(groups) do
    for _, c in ipairs(g) do completions[#completions + 1] = c.text end
  end
  source = string.format("%d prompts x G = %d sampled in %.1f s by %s on %s", opts.prompts, opts.G, sys.now() - t0,
                         opts.model, device)
  if opts.save ~= "" then
    local rows = {}
    for i, text in ipairs(completions) do rows[i] = {text = text} end
    outputs.write_jsonl(opts.save, rows)
  end
end
print(string.format("machine: %s, %d cores, %s", m.model, m.cores, m.simd))
print(string.format("step: %d completions, %s; problem %d^3 on %d threads", #completions, source, opts.size,
                    opts.threads > 0 and opts.threads or m.cores))

local paths = {}
if opts.waiting then
  paths = {
    {name = "every kernel", text = false, code = false, hold = false},
    {name = "text", text = true, code = false, hold = false},
    {name = "text + code", text = true, code = true, hold = false},
  }
end
-- the compiles under way held stopped while a full pool runs, instead of the pool waiting
paths[#paths + 1] = {name = "every, held", text = false, code = false, hold = true}
paths[#paths + 1] = {name = "t+c, held", text = true, code = true, hold = true}
-- and the loads and checks between calls split over the calls' threads (split_checks, the
-- default; every other path checks on one thread, as measured before it was)
paths[#paths + 1] = {name = "every, held, split", text = false, code = false, hold = true, split_checks = true}
for pool in opts.pools:gmatch("%d+") do
  paths[#paths + 1] = {name = "every, pool " .. pool, text = false, code = false, pool = tonumber(pool), hold = false}
  paths[#paths + 1] = {name = "t+c, pool " .. pool, text = true, code = true, pool = tonumber(pool), hold = false}
end
local bench_opts = {problem = {M = opts.size, N = opts.size, K = opts.size}, threads = opts.threads,
                    opt = "O3"}

-- The time covered by a set of spans {from, to}: their union.
local function covered(spans)
  table.sort(spans, function(x, y) return x[1] < y[1] end)
  local total, from, to = 0, nil, nil
  for _, sp in ipairs(spans) do
    if from and sp[1] <= to then
      to = math.max(to, sp[2])
    else
      if from then total = total + (to - from) end
      from, to = sp[1], sp[2]
    end
  end
  return from and total + (to - from) or total
end

-- One path's judgement of the step: its results and what it cost.
local function judge(path)
  evaluate.share_identical = path.text
  local b = {}
  for k, v in pairs(bench_opts) do b[k] = v end
  b.share, b.pool, b.hold, b.split_checks = path.code, path.pool, path.hold, path.split_checks or false
  local records = {}  -- the benchmark's own records, every field
  local batch_start, batch_end
  local seen = {evaluate_batch = function(sources, o)
    batch_start = sys.now()
    records = bench.evaluate_batch(sources, o)
    batch_end = sys.now()
    return records
  end}
  local start = sys.now()
  local results = evaluate.completions(completions, {bench = seen, bench_opts = b})
  local finish = sys.now()
  local wall = finish - start
  evaluate.share_identical = true
  local c = {wall = wall, compiled = #records, run = 0, compile_ms = 0, run_s = 0, check_ms = 0, calls_s = 0,
             statuses = {}}
  for i, r in ipairs(results) do c.statuses[i] = r.status end
  -- The pool's kernels take turns, so their run phases overlap: the serialised time is the
  -- union of their spans. A compile span runs from the fork to the compile report, less
  -- the time it was held stopped while a pool ran (so the compile phases are the time some
  -- compile span was open outside the run phases).
  local runs, compiles = {}, {}
  c.compile_span_s = 0
  for _, r in ipairs(records) do
    c.compile_ms = c.compile_ms + (r.compile_ms or 0)
    if r.compile_start then
      compiles[#compiles + 1] = {r.compile_start, r.compile_end}
      c.compile_span_s = c.compile_span_s + (r.compile_end - r.compile_start) - (r.compile_held or 0)
    end
    if not r.same_code_as and r.run_start then
      c.run = c.run + 1
      runs[#runs + 1] = {r.run_start, r.run_end}
      c.check_ms = c.check_ms + (r.check_ms or 0)
      -- The calls themselves, by the harness's clock; warm-up calls (not recorded) as long
      -- as the median timed one.
      local hs = r.harness_times or {}
      if #hs > 0 then
        for _, x in ipairs(hs) do c.calls_s = c.calls_s + x end
        c.calls_s = c.calls_s + (r.options.warmup or 0) * stats.median(hs)
      end
    end
  end
  local spans = {}  -- every compile and run span: what some phase covered
  for _, sp in ipairs(compiles) do spans[#spans + 1] = sp end
  for _, sp in ipairs(runs) do spans[#spans + 1] = sp end
  local busy = covered(spans)
  c.run_s = covered(runs)
  c.compile_phase_s = busy - c.run_s
  c.limit = c.compile_span_s / m.cores + c.calls_s
  -- The wall outside both phases: before the batch (extraction and the checks before
  -- compiling), from the request to the first fork, the gaps between phases, from the last
  -- run to the records' return, and after (the records read into results).
  c.before = (batch_start or finish) - start
  c.after = finish - (batch_end or finish)
  if #spans > 0 then
    local first, last = math.huge, -math.huge
    for _, sp in ipairs(spans) do first, last = math.min(first, sp[1]), math.max(last, sp[2]) end
    c.into, c.out = first - batch_start, batch_end - last
    c.gaps = (last - first) - busy
  else
    c.into, c.out, c.gaps = (batch_end or start) - (batch_start or start), 0, 0
  end
  return c
end

local costs = {}
for _, p in ipairs(paths) do costs[p.name] = {} end
for round = 1, opts.rounds do
  for k = 1, #paths do
    local p = paths[(round + k - 2) % #paths + 1]  -- the order turns each round
    table.insert(costs[p.name], judge(p))
    -- as it goes, so that a run cut short still says how far it got
    io.stderr:write(string.format("round %d, %s: %.2f s\n", round, p.name, costs[p.name][#costs[p.name]].wall))
  end
end

local function walls(name)
  local w = {}
  for i, c in ipairs(costs[name]) do w[i] = c.wall end
  return w
end
local base = stats.median(walls(paths[1].name))
print(string.format("\n%-18s %8s %6s %8s %5s %10s %14s %11s %11s %9s %8s %8s %9s %8s %6s", "path", "wall (s)",
                    "ratio", "compiled", "run", "compile/k", "compile phases", "cores busy", "run phases", "in calls",
                    "checks", "other", "limit", "x limit", "rounds"))
print("(compile/k: a kernel's compile in its child; compile phases: the time some kernel was compiling, and the")
print(" share of the cores busy with a compile (fork to report) then; run phases: the serialised time some")
print(" kernel ran: in the calls (command to answer, warm-up calls counted at the median timed one), in the")
print(" checks between calls, and the rest (pings, stops, a process's start and end); limit: the compiles at")
print(" full occupancy (their spans over the cores) plus the calls, what the step cannot go below without")
print(" compiling or timing less; x limit: the wall over it; these two medians over the rounds, the rest")
print(" the first round's)")
local reference = costs[paths[1].name][1].statuses
local differ = 0
for _, p in ipairs(paths) do
  for _, c in ipairs(costs[p.name]) do
    for j, s in ipairs(c.statuses) do
      if s ~= reference[j] then differ = differ + 1 end
    end
  end
  local c = costs[p.name][1]
  local wall = stats.median(walls(p.name))
  local limits, over = {}, {}  -- each round's limit, and its wall over it
  for i, r in ipairs(costs[p.name]) do limits[i], over[i] = r.limit, r.wall / r.limit end
  print(string.format("%-18s %8.2f %5.2fx %8d %5d %7.0f ms %12.2f s %10.0f%% %9.2f s %7.2f s %6.2f s %6.2f s %7.2f s %7.2fx %6d",
                      p.name, wall, base / wall, c.compiled, c.run, c.compile_ms / math.max(1, c.compiled),
                      c.compile_phase_s, 100 * c.compile_span_s / math.max(1e-9, c.compile_phase_s * m.cores), c.run_s,
                      c.calls_s, c.check_ms / 1000, c.run_s - c.calls_s - c.check_ms / 1000, stats.median(limits),
                      stats.median(over),
                      #costs[p.name]))
end
print(string.format("\n%-18s %8s %8s %8s %8s %8s %8s", "outside phases", "before", "to fork", "gaps", "to return",
                    "after", "total"))
print("(before: extraction and checks before the batch; to fork: the request to the first compile's fork; gaps:")
print(" between phases inside the batch; to return: the last run's end to the records back; after: the records")
print(" read into results; the first round's)")
for _, p in ipairs(paths) do
  local c = costs[p.name][1]
  print(string.format("%-18s %6.2f s %6.2f s %6.2f s %7.2f s %6.2f s %6.2f s", p.name, c.before, c.into, c.gaps, c.out,
                      c.after, c.before + c.into + c.gaps + c.out + c.after))
end
local counts = {}
for _, s in ipairs(reference) do counts[s] = (counts[s] or 0) + 1 end
local parts = {}
for s, n in pairs(counts) do parts[#parts + 1] = s .. " " .. n end
table.sort(parts)
print(string.format("\nstatuses (every kernel path, first round): %s", table.concat(parts, ", ")))
print(string.format("kernels whose status differs from that round's on any path or round: %d of %d x %d", differ,
                    #completions, #paths * opts.rounds))
