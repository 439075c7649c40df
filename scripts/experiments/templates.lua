-- The best the templates can do, against the best the model learned to write.
--
-- The default model was pretrained on kernelgen's kernels, so a reviewer asks whether RL
-- finds kernels better than the best the templates can express. This script searches
-- kernelgen's parameter space with the experiments' own evaluation (the size, compiler
-- level, timed runs, verification and vector ISA of the given runs), then re-measures its
-- best kernels and the best kernel of every configuration of the runs together, in
-- interleaved rounds with OpenBLAS, on this machine.
--
--   engine templates.lua runs/experiment1                    # search, then compare
--   engine templates.lua runs/experiment1 runs/experiment2 --budget=1024
--   engine templates.lua runs/experiment1 --resume           # continue a stopped search
--
-- The search: --budget kernels, half drawn at random from the whole template space (all
-- five techniques allowed, each kernel a random subset), then rounds of --batch
-- neighbours (kernelgen.mutate: one part drawn again, or one technique added or dropped)
-- of the --keep fastest kernels found so far. Every evaluated kernel is stored in --out
-- (runs/templates: a run store, one transaction a batch), so a stopped search resumes
-- where it was.
-- OUT/compare.md and OUT/compare.json hold the re-measurement: per kernel the median
-- GFLOPS of --repeats rounds (its range beside it; a round's figure is its median call of
-- --remeasure_runs), against OpenBLAS and the best template kernel.

local cli = require "core.cli"
local kernelgen = require "kernelgen"
local results = require "report.results"
local runs = require "run.runs"
local seed_results = require "report.seed_results"
local stages = require "method.stages"
local stats = require "core.stats"
local wiring = require "method.wiring"

local M = {}

M.spec = {
  description = "Searches kernelgen's template space with the runs' evaluation and re-measures "
    .. "its best kernels with the runs' best, together.",
  positional = "RUN_DIR [RUN_DIR ...]",
  options = {
    {"out", "runs/templates", "the search's run store and the comparison"},
    {"budget", 512, "kernels the search evaluates", min = 1},
    {"batch", 32, "kernels evaluated together (one local round of the search)", min = 1},
    {"keep", 8, "fastest kernels whose neighbours a local round evaluates", min = 1},
    {"random_share", 0.5, "share of the budget drawn at random before the local rounds",
     min = 0, max = 1},
    {"top", 3, "template kernels taken into the re-measurement", min = 1},
    {"repeats", 5, "rounds of the re-measurement (each kernel once a round, and OpenBLAS)",
     min = 1},
    {"remeasure_runs", 40, "timed calls of a kernel in a round of the re-measurement (3 warm-up "
     .. "calls first); its figure is the GFLOPS of the median call", min = 1, max = 61},
    {"seed", 1, "seed of the search"},
    {"resume", false, "continue the search in --out"},
    cli.debug_option,
  },
}

-- The evaluation settings every run must share, read from the runs' identities.
local shared_settings = {"size", "opt", "threads", "verify", "isa"}

local function load_runs(dirs)
  local exps, settings, first = {}, nil, nil
  for i, dir in ipairs(dirs) do
    local exp = cli.try(nil, results.load, dir)
    exps[i] = exp
    for _, cfg in ipairs(exp.configs) do
      local id = cfg.identity
      local these = {size = id.size, threads = id.threads, verify = id.verify, isa = id.isa,
                     opt = cfg.config.opt or id.opt}
      if not settings then
        settings, first = these, cfg.dir
        settings.identity = id
      else
        for _, k in ipairs(shared_settings) do
          if these[k] ~= settings[k] then
            cli.fail(string.format("%s and %s were evaluated with different --%s (%s, %s): "
                                   .. "compare runs of one evaluation", first, cfg.dir, k,
                                   tostring(settings[k]), tostring(these[k])))
          end
        end
      end
    end
  end
  return exps, settings
end

-- Evaluates kernels {code =, params =, part =} and stores them as samples of `round`.
local function evaluate_and_store(run, b, round, kernels)
  local sources = {}
  for i, k in ipairs(kernels) do sources[i] = k.code end
  local out = bench.evaluate_batch(sources, b)
  run:atomic(function()
    for i, r in ipairs(out) do
      local k = kernels[i]
      run:add_sample{iteration = round, prompt = "", completion = "", code = k.code,
                     status = r.status, gflops = r.gflops, reward = r.gflops or 0,
                     timings = {times = r.times, compile_ms = r.compile_ms},
                     extra = {params = k.params, part = k.part, combo = k.combo,
                              techniques = k.techniques, message = r.message}}
    end
  end)
  local best
  for _, r in ipairs(out) do
    if r.status == "ok" and (best == nil or r.gflops > best) then best = r.gflops end
  end
  return best
end

-- The `n` fastest distinct kernels stored so far.
local function fastest(run, n)
  local out, seen = {}, {}
  for _, s in ipairs(run:samples{status = "ok", order_by = "gflops", descending = true, limit = 50 * n}) do
    if not seen[s.code] then
      seen[s.code] = true
      out[#out + 1] = s
      if #out == n then break end
    end
  end
  return out
end

-- A kernel of kernelgen as the search stores it; `part` says how it was drawn.
local function searched(k, part)
  return {code = k.code, params = k.params, part = part, combo = k.combo, techniques = k.techniques}
end

local function random_kernels(rng, n, isa)
  local out = {}
  for i = 1, n do
    out[i] = searched(kernelgen.kernel(rng, {allowed = stages.techniques, isa = isa,
                                             richness = rng:uniform()}), "random")
  end
  return out
end

local function neighbours(rng, parents, n, isa)
  local out = {}
  for i = 1, n do
    local params, part = kernelgen.mutate(rng, parents[(i - 1) % #parents + 1].extra.params, isa)
    out[i] = searched(kernelgen.kernel(rng, {params = params}), part)
  end
  return out
end

-- The search, from where the store says it stopped. Batches are drawn from seeds of
-- their own, so a resumed search draws what an uninterrupted one would have.
function M.search(run, opts, settings, b)
  local isa = settings.isa
  local random_n = math.floor(opts.budget * opts.random_share + 0.5)
  while true do
    local done = run:count()
    if done >= opts.budget then break end
    local rng = kernelgen.rng(opts.seed * 1000003 + done)
    local kernels, round
    if done < random_n or #fastest(run, 1) == 0 then
      kernels, round = random_kernels(rng, math.min(opts.batch, opts.budget - done), isa), 0
    else
      round = 1 + (done - random_n) // opts.batch
      kernels = neighbours(rng, fastest(run, opts.keep), math.min(opts.batch, opts.budget - done), isa)
    end
    local best = evaluate_and_store(run, b, round, kernels)
    local top = fastest(run, 1)[1]
    log.info("templates", {evaluated = done + #kernels, budget = opts.budget, round = round,
                           batch_best = best and string.format("%.2f", best) or "-",
                           best = top and string.format("%.2f", top.gflops) or "-"})
  end
end

-- The kernels to re-measure: the search's top ones and each configuration's best (over its
-- seeds: the best confirmed kernel of each seed's run).
local function candidates(run, opts, exps)
  local list = {}
  for i, s in ipairs(fastest(run, opts.top)) do
    list[#list + 1] = {name = "templates #" .. i, source = "templates", code = s.code,
                       first = s.gflops, techniques = s.extra.techniques, combo = s.extra.combo}
  end
  for _, exp in ipairs(exps) do
    for _, g in ipairs(seed_results.groups(exp)) do
      for _, cfg in ipairs(g.runs) do
        if cfg.best then
          local seed = #g.runs > 1 and (" seed " .. seed_results.seed_of(cfg)) or ""
          list[#list + 1] = {name = (exp.kind or "run") .. " " .. g.name .. seed,
                             source = exp.kind or "run", group = g.name, dir = cfg.dir,
                             code = cfg.best.code, first = cfg.best.gflops,
                             techniques = results.techniques(cfg.best)}
        end
      end
    end
  end
  return list
end

local median = stats.median

-- Every candidate once a round, OpenBLAS once a round; a kernel that fails a round is
-- reported with its status (a best kernel that does not reproduce is a finding).
-- A call at 256^3 on 16 cores lasts about 0.1 ms, where an experiment's few timed calls
-- are at the mercy of thread wake-ups: the re-measurement makes many calls and takes the
-- median one.
function M.remeasure(list, b, repeats, calls)
  local sources = {}
  for i, c in ipairs(list) do
    sources[i], c.gflops, c.failures = c.code, {}, {}
  end
  local many = {}
  for k, v in pairs(b) do many[k] = v end
  many.warmup, many.runs, many.max_runs = 3, calls, calls
  local flops = 2.0 * b.problem.M * b.problem.N * b.problem.K
  local reference = {}
  for round = 1, repeats do
    local out = bench.evaluate_batch(sources, many)
    for i, r in ipairs(out) do
      local c = list[i]
      if r.status == "ok" then c.gflops[#c.gflops + 1] = flops / r.median * 1e-9
      else c.failures[#c.failures + 1] = r.status end
    end
    local ref = bench.reference{problem = b.problem, threads = b.threads, verify = b.verify,
                                warmup = 3, runs = calls, max_runs = calls}
    if ref.status == "ok" then reference[#reference + 1] = flops / ref.median * 1e-9 end
    log.info("re-measured", {round = round, of = repeats})
  end
  for _, c in ipairs(list) do
    c.median = median(c.gflops)
    if #c.gflops > 0 then c.lo, c.hi = math.min(table.unpack(c.gflops)), math.max(table.unpack(c.gflops)) end
  end
  return {median = median(reference), values = reference}
end

local function fmt(v, pattern) return v and string.format(pattern or "%.1f", v) or "-" end

function M.table(list, reference, settings, machine)
  local best_template
  for _, c in ipairs(list) do
    if c.source == "templates" and c.median and (best_template == nil or c.median > best_template) then
      best_template = c.median
    end
  end
  local rows = {
    string.format("Re-measured together on %s: %d^3, -%s, %s verification, %s prompts; median "
                  .. "of the rounds (range), a round's figure the median of its calls; OpenBLAS %s "
                  .. "GFLOPS (likewise).", machine,
                  settings.size, settings.opt, settings.verify, settings.isa, fmt(reference.median)),
    "",
    "| kernel | techniques | first measured | re-measured GFLOPS | range | vs OpenBLAS | vs best template |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  }
  for _, c in ipairs(list) do
    local failed = #c.failures > 0 and (" (" .. #c.failures .. " rounds failed: " .. c.failures[1] .. ")") or ""
    rows[#rows + 1] = string.format("| %s | %s | %s | %s%s | %s-%s | %s | %s |", c.name,
      table.concat(c.techniques or {}, ", "), fmt(c.first), fmt(c.median), failed, fmt(c.lo), fmt(c.hi),
      (c.median and reference.median) and fmt(c.median / reference.median, "%.2fx") or "-",
      (c.median and best_template) and fmt(c.median / best_template, "%.2fx") or "-")
  end
  -- the verdict per source: its best re-measured kernel against the best template one
  local by_source = {}
  for _, c in ipairs(list) do
    local key = c.group and (c.source .. " " .. c.group) or nil
    if key and c.median and (by_source[key] == nil or c.median > by_source[key].median) then
      by_source[key] = c
    end
  end
  local keys = {}
  for k in pairs(by_source) do keys[#keys + 1] = k end
  table.sort(keys)
  rows[#rows + 1] = ""
  for _, k in ipairs(keys) do
    local c = by_source[k]
    rows[#rows + 1] = string.format("- %s: best kernel %s GFLOPS, %s the best template kernel (%s).",
      k, fmt(c.median), best_template and fmt(c.median / best_template, "%.2fx") or "-", fmt(best_template))
  end
  return table.concat(rows, "\n") .. "\n", best_template
end

function M.main(argv)
  local opts, dirs = cli.parse_dirs(argv, M.spec,
                                    "engine templates.lua RUN_DIR [RUN_DIR ...] [--budget=N]")
  local exps, settings = load_runs(dirs)
  local machine = bench.machine()
  if settings.isa == "avx512" and machine.simd ~= "avx512" then
    cli.fail(string.format("the runs' prompts asked for AVX-512, which this machine (%s) "
                           .. "lacks: re-measure them where they ran", machine.simd))
  end
  local out = opts.out
  local identity = {experiment = "templates", size = settings.size, opt = settings.opt,
                    threads = settings.threads, verify = settings.verify, isa = settings.isa,
                    runs = settings.identity.runs, warmup = settings.identity.warmup,
                    timeout = settings.identity.timeout, seed = opts.seed, batch = opts.batch,
                    keep = opts.keep, random_share = opts.random_share}
  local run <close> = runs.open_run(out, identity, opts)
  local b = wiring.bench_opts(settings.identity, {opt = settings.opt})  -- the first run's
  M.search(run, opts, settings, b)

  local list = candidates(run, opts, exps)
  local reference = M.remeasure(list, b, opts.repeats, opts.remeasure_runs)
  local where = string.format("%s %s (%d cores, %s, target %s)", machine.model or "", machine.cpu or "",
                              machine.cores, machine.simd, machine.target)
  local text = M.table(list, reference, settings, where)
  local f = assert(io.open(out .. "/compare.md", "w"))
  f:write("# Templates against RL\n\n", string.format("Search: %d kernels (seed %d). Runs: %s.\n\n",
          run:count(), opts.seed, table.concat(dirs, ", ")), text)
  f:close()
  local rows = {}
  for i, c in ipairs(list) do
    rows[i] = {name = c.name, source = c.source, group = c.group, dir = c.dir, first = c.first,
               median = c.median, lo = c.lo, hi = c.hi, gflops = c.gflops, failures = c.failures,
               techniques = c.techniques}
  end
  json.write(out .. "/compare.json", {kernels = rows, openblas = reference, machine = machine,
                                      size = settings.size, opt = settings.opt})
  io.stdout:write(text)
  print("written to " .. out .. "/compare.md")
  run:close()
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
