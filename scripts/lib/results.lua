-- Reading an experiment's runs back: one entry per configuration, its per-step (or
-- per-iteration) series, its best kernel and that kernel's lineage, and the paper's
-- Table II and Table III as markdown. Experiment 3's tables over turns: turn_results.lua.
-- One file over 600 lines: the reading, the statistics over seeds and the tables share
-- the shape of an entry that only this module defines.
--
--   local results = require "results"
--   local exp = results.load("runs/experiment2")   -- every configuration under it
--   results.table2(exp), results.table3(exp), results.lineage_table(best.lineage)

local controls = require "controls"
local stages = require "stages"
local stats = require "stats"
local sweep = require "engine.sweep"

local results = {}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- A markdown table's row of cells, and its first two rows: `columns` holds {title,
-- alignment} per column ("---", "---:", ":---:").
local function md_row(cells)
  return "| " .. table.concat(cells, " | ") .. " |"
end

local function md_head(columns)
  local titles, aligns = {}, {}
  for i, c in ipairs(columns) do titles[i], aligns[i] = c[1], c[2] end
  return {md_row(titles), md_row(aligns)}
end

-- Configurations in the paper's order: by compiler level, then learning rate, then any
-- other swept value.
results.order = {"opt", "lr", "beta"}

function results.config_order(a, b)
  local keys = {table.unpack(results.order)}
  for _, k in ipairs(sorted_keys(a.config)) do
    local known = false
    for _, o in ipairs(results.order) do known = known or o == k end
    if not known then keys[#keys + 1] = k end
  end
  for _, k in ipairs(keys) do
    local x, y = a.config[k], b.config[k]
    if x ~= y and x ~= nil and y ~= nil then
      if type(x) == type(y) then return x < y end
      return tostring(x) < tostring(y)
    end
  end
  return a.name < b.name
end

-- The configurations under an experiment directory (each a run directory).
function results.load(dir)
  if not sys.exists(dir) then error("results: no such directory " .. dir, 2) end
  local exp = {dir = dir, configs = {}}
  local paths = {}
  if sys.exists(dir .. "/config.json") then  -- one configuration's run directory
    paths[1] = dir
  else
    for _, name in ipairs(sys.listdir(dir)) do paths[#paths + 1] = dir .. "/" .. name end
  end
  for _, path in ipairs(paths) do
    local name = path:match("([^/]+)$")
    if sys.exists(path .. "/config.json") and sys.exists(path .. "/run.sqlite") then
      local run = store.open(path, {read_only = true})  -- no lock: a live run reads too
      local identity = run:config()
      local cfg = {name = name, dir = path, identity = identity,
                   config = identity.config or {}, metrics = run:metrics(),
                   machine = run:get("machine"), nodes = run:get("nodes"),
                   reference = run:get("reference"), control = run:get("control")}
      exp.kind = exp.kind or identity.experiment
      -- The best kernel is the best confirmed one (re-measured by a second evaluation;
      -- runs made before re-measuring have only first measurements).
      local candidates = run:samples{status = "ok", order_by = "gflops", descending = true, limit = 500}
      local best, remeasured = nil, false
      for _, s in ipairs(candidates) do
        local confirmed = s.extra and s.extra.confirmed_gflops
        if confirmed then
          remeasured = true
          if confirmed > 0 and (best == nil or confirmed > best.gflops) then
            s.measured_gflops, s.gflops = s.gflops, confirmed
            best = s
          end
        end
      end
      if not remeasured then best = candidates[1] end
      if best then
        cfg.best = best
        cfg.lineage = run:lineage(best.id)
      end
      cfg.samples = run:count()
      cfg.tasks = results.task_samples(run)
      cfg.references = run:get("references")
      run:close()
      exp.configs[#exp.configs + 1] = cfg
    end
  end
  if #exp.configs == 0 then
    error("results: " .. dir .. " holds no runs (no <config>/config.json)", 2)
  end
  table.sort(exp.configs, results.config_order)
  return exp
end

-- A mixture's samples per task (extra.task): {NAME = {n =, ok =, rewards = {iteration =
-- {rewards}}, best = speed}}, or nil for a run of one task. The seed kernels (iteration
-- 0) are left out.
function results.task_samples(run)
  local out, any = {}, false
  for _, s in ipairs(run:samples{}) do
    local task = s.extra and s.extra.task
    if task and (s.iteration or 0) > 0 then
      any = true
      local t = out[task] or {n = 0, ok = 0, rewards = {}, best = nil}
      out[task] = t
      t.n = t.n + 1
      if s.status == "ok" then
        t.ok = t.ok + 1
        local speed = s.extra.speed or s.gflops
        if speed and (t.best == nil or speed > t.best) then t.best = speed end
      end
      local it = s.iteration
      t.rewards[it] = t.rewards[it] or {}
      table.insert(t.rewards[it], s.reward)
    end
  end
  return any and out or nil
end

-- A task's final mean reward in one run: the mean over the last quarter of its
-- iterations (steps), at least the last one.
local function task_final(t)
  local its = {}
  for it in pairs(t.rewards) do its[#its + 1] = it end
  table.sort(its)
  if #its == 0 then return nil end
  local from = math.max(1, #its - math.max(1, #its // 4) + 1)
  local sum, n = 0, 0
  for i = from, #its do
    for _, r in ipairs(t.rewards[its[i]]) do sum, n = sum + r, n + 1 end
  end
  return n > 0 and sum / n or nil
end

-- A mixture's row per task and configuration: kernels, the share that verified, the best
-- speed (a percentage of the task's roofline), and the final mean reward with its 95%
-- interval over the seeds (one seed: no interval). Nil when no run is a mixture.
function results.tasks_table(exp)
  local rows = {
    "| configuration | task | kernels | verified | best (% of the roofline) | final mean reward | seeds |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  }
  local any = false
  for _, g in ipairs(results.groups(exp)) do
    local names = {}
    for _, cfg in ipairs(g.runs) do
      for task in pairs(cfg.tasks or {}) do names[task] = true end
    end
    for _, task in ipairs(sorted_keys(names)) do
      any = true
      local n, ok, best, finals = 0, 0, nil, {}
      for _, cfg in ipairs(g.runs) do
        local t = cfg.tasks and cfg.tasks[task]
        if t then
          n, ok = n + t.n, ok + t.ok
          if t.best and (best == nil or t.best > best) then best = t.best end
          finals[#finals + 1] = task_final(t)
        end
      end
      rows[#rows + 1] = string.format("| %s | %s | %d | %.0f%% | %s | %s | %d |", g.name, task, n,
                                      n > 0 and 100 * ok / n or 0, best and string.format("%.1f", best) or "-",
                                      results.pm(results.interval(finals)), #g.runs)
    end
  end
  return any and (table.concat(rows, "\n") .. "\n") or nil
end

-- The points of one figure for one configuration: per step for experiment 1, per SQD
-- iteration for experiment 2. field: "mean_reward" or "max_gflops".
function results.series(cfg, field)
  local points = {}
  for _, m in ipairs(cfg.metrics) do
    if m.kind == "step" then points[#points + 1] = {m.step, m[field]}
    elseif m.kind == "iteration" then points[#points + 1] = {m.iteration, m[field]} end
  end
  table.sort(points, function(a, b) return a[1] < b[1] end)
  return points
end

function results.x_label(exp)
  return exp.kind == "experiment2" and "SQD iteration" or "step"
end

-- The FP64 peak of the machine the runs were measured on: the measured one where the
-- engine recorded it (then `measured` is true), else the nominal figure (clock x assumed
-- FMA pipes), else nil.
local function peak(cfg)
  local m = cfg.machine
  if type(m) ~= "table" then return nil end
  if type(m.measured_peak_gflops) == "number" and m.measured_peak_gflops > 0 then
    return m.measured_peak_gflops, true
  end
  return m.peak_gflops or m.peak or (type(m.fp64_peak) == "table" and m.fp64_peak.gflops)
    or m.fp64_peak, false
end

-- A figure's share of the peak. Nothing runs faster than the machine's peak, so a figure
-- above it is not printed as a ratio: the peak or the timing is wrong (peak_warnings).
function results.peak_ratio(gflops, p)
  if not (gflops and p and p > 0) then return "-" end
  if gflops > p then return "above the peak: see below" end
  return string.format("%.1f%%", 100 * gflops / p)
end

-- Lines that say which configurations' best kernels read above the peak, or nil.
function results.peak_warnings(exp)
  local lines = {}
  for _, g in ipairs(results.groups(exp)) do
    local best = exp.seeded and results.group_figures(exp, g).iv.best.mean
      or (g.runs[1].best and g.runs[1].best.gflops)
    local p, measured = peak(g.runs[1])
    if best and p and best > p then
      lines[#lines + 1] = string.format(
        "- **`%s`: its best kernel reads %.1f GFLOPS, above the %s FP64 peak of %.1f GFLOPS.** "
          .. "No kernel runs faster than the machine's peak, so %s; the ratio is not printed.",
        g.name, best, measured and "measured" or "nominal", p,
        measured and "the timing of that kernel (or the peak's measurement) is wrong"
          or "the nominal peak (a clock times assumed FMA pipes) is wrong for this machine")
    end
  end
  if #lines == 0 then return nil end
  return table.concat(lines, "\n") .. "\n"
end

local function fmt(v, pattern)
  if v == nil then return "-" end
  return string.format(pattern or "%.2f", v)
end

-- Whether `base` is the lr = 0 configuration of `config`: the same swept values but lr.
local function is_baseline_of(base, config)
  if base.lr ~= 0 then return false end
  for k, v in pairs(config) do
    if k ~= "lr" and base[k] ~= v then return false end
  end
  for k in pairs(base) do
    if config[k] == nil then return false end
  end
  return true
end

-- The configuration with the same swept values except lr = 0, if the sweep had one.
local function baseline(exp, cfg)
  for _, other in ipairs(exp.configs) do
    if other ~= cfg and is_baseline_of(other.config, cfg.config) then return other end
  end
  return nil
end

-- The mean reward over the last quarter of a configuration's steps (or iterations).
function results.final_reward(cfg)
  local points = results.series(cfg, "mean_reward")
  if #points == 0 then return nil end
  local n = math.max(1, #points // 4)
  local sum = 0
  for i = #points - n + 1, #points do sum = sum + points[i][2] end
  return sum / n
end

-- Table II: best GFLOPS, peak ratio, the ratio to the yardstick measured at the run's start,
-- the learning gain against lr = 0 (the ratio of best GFLOPS), with the final mean reward
-- and its difference from lr = 0.
function results.table2(exp)
  local rows = {
    "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain | final mean reward | "
      .. "reward gain | samples |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  }
  for _, cfg in ipairs(exp.configs) do
    local best = cfg.best and cfg.best.gflops
    local p = peak(cfg)
    local final = results.final_reward(cfg)
    local gain, reward_gain = "-", "-"
    local base = baseline(exp, cfg)
    if base then
      if best and base.best and base.best.gflops > 0 then
        gain = string.format("%.2fx (%+.2f GFLOPS)", best / base.best.gflops, best - base.best.gflops)
      end
      local base_final = results.final_reward(base)
      if final and base_final then reward_gain = string.format("%+.2f", final - base_final) end
    elseif cfg.config.lr == 0 then
      gain, reward_gain = "(baseline)", "(baseline)"
    end
    local shown = fmt(best)
    if best and cfg.best.measured_gflops then
      shown = shown .. " (first " .. fmt(cfg.best.measured_gflops) .. ")"
    end
    local ref = cfg.reference and cfg.reference.gflops
    rows[#rows + 1] = string.format("| %s | %s | %s | %s | %s | %s | %s | %d |", cfg.name, shown,
                                    results.peak_ratio(best, p),
                                    (best and ref and ref > 0) and string.format("%.2fx", best / ref) or "-",
                                    gain, fmt(final), reward_gain, cfg.samples)
  end
  return table.concat(rows, "\n") .. "\n"
end

-- The techniques of a stored kernel: the front end's features when the result carried
-- them, else the patterns.
function results.techniques(sample)
  if sample.extra and sample.extra.techniques then return sample.extra.techniques end
  return stages.list(stages.detect(sample.code))
end

-- The vector ISAs the runs' prompts named (config.json's isa; runs made before it was
-- recorded asked for the paper's AVX-512), sorted.
function results.isas(exp)
  local seen, out = {}, {}
  for _, cfg in ipairs(exp.configs) do
    local isa = (cfg.identity and cfg.identity.isa) or stages.default_isa
    if not seen[isa] then seen[isa] = true; out[#out + 1] = isa end
  end
  table.sort(out)
  return out
end

-- The name of a technique as the runs asked for it: the SIMD column follows their ISA.
function results.technique_name(exp, tech)
  local isas = results.isas(exp)
  if #isas == 1 or tech ~= "simd" then return stages.name(tech, isas[1]) end
  local names = {}
  for i, isa in ipairs(isas) do names[i] = stages.isa(isa).name end
  return "SIMD intrinsics (" .. table.concat(names, ", ") .. ")"
end

-- What the report says of the machine and the ISA: the prompts' ISA per configuration
-- and the vector ISA, target and peak the benchmark machine reported.
function results.machine_text(exp)
  local lines = {}
  local isas = results.isas(exp)
  local names = {}
  for i, isa in ipairs(isas) do names[i] = stages.isa(isa).name .. " (`" .. isa .. "`)" end
  lines[1] = "Vector ISA the prompts asked for: " .. table.concat(names, ", ") .. "."
  -- Each machine the runs were measured on, with its runs when there are several: GFLOPS
  -- from different machines are not comparable.
  local machines, order = {}, {}
  for _, cfg in ipairs(exp.configs) do
    local m = cfg.machine
    if type(m) == "table" then
      local parts = {}
      if m.model then parts[#parts + 1] = tostring(m.model) end
      if m.simd then parts[#parts + 1] = "vector ISA " .. (stages.isas[m.simd] and stages.isas[m.simd].name or m.simd) end
      if m.target then parts[#parts + 1] = "target " .. tostring(m.target) end
      if m.cores then parts[#parts + 1] = m.cores .. " cores" end
      local p, measured = peak(cfg)
      if p and measured then
        parts[#parts + 1] = string.format("FP64 peak %.1f GFLOPS measured %s (nominal %s)", p,
                                          tostring(m.measured_peak_date or "?"),
                                          m.peak_gflops and string.format("%.1f", m.peak_gflops) or "-")
      elseif p then
        parts[#parts + 1] = string.format("FP64 peak %.1f GFLOPS nominal (not measured)", p)
      end
      if type(cfg.nodes) == "table" and #cfg.nodes > 0 then
        parts[#parts + 1] = string.format("measured by %d benchmark worker%s", #cfg.nodes, #cfg.nodes == 1 and "" or "s")
      end
      local text = table.concat(parts, ", ")
      if text ~= "" then
        if not machines[text] then
          machines[text] = {}
          order[#order + 1] = text
        end
        table.insert(machines[text], cfg.name)
      end
    end
  end
  if #order == 1 then
    lines[#lines + 1] = "Machine: " .. order[1] .. "."
  elseif #order > 1 then
    local parts = {}
    for _, text in ipairs(order) do parts[#parts + 1] = text .. " (" .. table.concat(machines[text], ", ") .. ")" end
    lines[#lines + 1] = "Machines (their GFLOPS are not comparable with each other's): "
                        .. table.concat(parts, "; ") .. "."
  end
  local ref = exp.configs[1].reference
  if type(ref) == "table" and ref.gflops then
    lines[#lines + 1] = string.format("The yardstick of \"vs yardstick\", the fastest library on the same "
                                      .. "problem: %s, %.1f GFLOPS by its fastest call (as kernels are "
                                      .. "measured; median call %.1f) with %d threads.",
                                      ref.library or "OpenBLAS", ref.gflops, ref.median or 0, ref.threads or 0)
    if ref.shared then
      lines[#lines + 1] = "It was measured once, when the sweep's first run (" .. tostring(ref.measured_by)
                          .. ") started, and every run divides by that measurement."
    end
  end
  return table.concat(lines, " ") .. "\n"
end

-- Table III: the techniques of each configuration's best kernel.
function results.table3(exp)
  local columns = {{"configuration", "---"}, {"techniques of the best kernel", "---"}}
  for _, tech in ipairs(stages.techniques) do
    columns[#columns + 1] = {results.technique_name(exp, tech), ":---:"}
  end
  local rows = md_head(columns)
  for _, cfg in ipairs(exp.configs) do
    local cells = {cfg.name}
    if cfg.best then
      local used = {}
      for _, tech in ipairs(results.techniques(cfg.best)) do used[tech] = true end
      local list = results.techniques(cfg.best)
      cells[2] = #list > 0 and table.concat(list, ", ") or "none"
      for _, tech in ipairs(stages.techniques) do cells[#cells + 1] = used[tech] and "x" or "" end
    else
      cells[2] = "(no successful kernel)"
      for _ = 1, #stages.techniques do cells[#cells + 1] = "" end
    end
    rows[#rows + 1] = md_row(cells)
  end
  return table.concat(rows, "\n") .. "\n"
end

-- The lineage of a kernel, root first, as a markdown table.
function results.lineage_table(lineage)
  local rows = {"| action | id | iteration | stage | status | GFLOPS |",
                "| --- | ---: | ---: | ---: | --- | ---: |"}
  for _, s in ipairs(lineage or {}) do
    local turn = s.extra and s.extra.turn  -- experiment 3: a kernel's turn in its episode
    local action = (s.extra and s.extra.action) or (turn and ("turn " .. turn))
                   or (s.parent_id and "child" or "sample")
    rows[#rows + 1] = string.format("| %s | %d | %d | %s | %s | %s |", action, s.id, s.iteration,
                                    s.stage and tostring(s.stage) or "-", s.status, fmt(s.gflops))
  end
  return table.concat(rows, "\n") .. "\n"
end

-- SQD's pools: how many kernels each stage kept after every iteration (experiment 2).
function results.pools_table(exp)
  local columns = {{"configuration", "---"}, {"iteration", "---:"}}
  for s = 1, stages.count do columns[#columns + 1] = {"stage " .. s, "---:"} end
  local rows = md_head(columns)
  for _, cfg in ipairs(exp.configs) do
    for _, m in ipairs(cfg.metrics) do
      if m.kind == "iteration" and m.pool then
        local cells = {cfg.name, tostring(m.iteration)}
        for s = 1, stages.count do cells[#cells + 1] = tostring(m.pool[s] or 0) end
        rows[#rows + 1] = md_row(cells)
      end
    end
  end
  return table.concat(rows, "\n") .. "\n"
end

-- The configuration holding the best kernel of the whole experiment.
function results.best(exp)
  local best
  for _, cfg in ipairs(exp.configs) do
    if cfg.best and (best == nil or cfg.best.gflops > best.best.gflops) then best = cfg end
  end
  return best
end

---------------------------------------------------------------------------------------
-- Seeds: runs that differ only in their seed form one group; its figures are given as a
-- mean and a 95% interval over the seeds (Student t with n - 1 degrees of freedom).
---------------------------------------------------------------------------------------

-- The interval arithmetic lives in stats.lua; these names stay for the report's readers.
results.t975, results.t_quantile = stats.t975, stats.t_quantile
results.median, results.interval, results.difference = stats.median, stats.interval, stats.difference

-- "mean ± half-width" (only the mean with one value, "-" with none).
function results.pm(iv, pattern)
  pattern = pattern or "%.2f"
  if not iv or iv.mean == nil then return "-" end
  if iv.half == nil then return string.format(pattern, iv.mean) end
  return string.format(pattern .. " ± %.2f", iv.mean, iv.half)
end

-- Whether an interval of a difference excludes 0, in words.
function results.verdict(iv, better, worse, same)
  if not iv or iv.mean == nil then return "no value" end
  if iv.half == nil then return "one value: no interval" end
  local where = string.format("[%+.2f, %+.2f]", iv.lo, iv.hi)
  if iv.lo > 0 then return "the interval " .. where .. " excludes 0: " .. better end
  if iv.hi < 0 then return "the interval " .. where .. " excludes 0: " .. worse end
  return "the interval " .. where .. " includes 0: " .. same
end

-- The seed of a run: its configuration's (runs of --seeds), else its options'.
function results.seed_of(cfg)
  return cfg.config.seed or (cfg.identity and cfg.identity.seed) or 1
end

local function base_config(config)
  local base = {}
  for k, v in pairs(config) do if k ~= "seed" then base[k] = v end end
  return base
end

-- The groups of runs that differ only in their seed, in the order of exp.configs: each
-- {key =, name =, config = (without the seed), runs = (by seed), seeds =}. Sets
-- exp.groups and exp.seeded (some group has several runs).
function results.groups(exp)
  if exp.groups then return exp.groups end
  local groups, by_key = {}, {}
  for _, cfg in ipairs(exp.configs) do
    local base = base_config(cfg.config)
    local key = next(base) and sweep.name(base) or cfg.name
    local g = by_key[key]
    if not g then
      g = {key = key, name = cfg.config.seed and key or cfg.name, config = base, runs = {}}
      by_key[key] = g
      groups[#groups + 1] = g
    end
    if cfg.config.seed then g.name = key end
    g.runs[#g.runs + 1] = cfg
  end
  exp.seeded = false
  for _, g in ipairs(groups) do
    table.sort(g.runs, function(a, b) return results.seed_of(a) < results.seed_of(b) end)
    g.seeds = {}
    for i, cfg in ipairs(g.runs) do g.seeds[i] = results.seed_of(cfg) end
    if #g.runs > 1 then exp.seeded = true end
  end
  exp.groups = groups
  return groups
end

-- One run's figures: best GFLOPS, final mean reward, the ratio to the yardstick (the fastest library).
function results.run_figures(cfg)
  local best = cfg.best and cfg.best.gflops
  local ref = cfg.reference and cfg.reference.gflops
  return {best = best, final = results.final_reward(cfg),
          vs_openblas = (best and ref and ref > 0) and best / ref or nil}
end

-- The group of the same swept values with lr = 0, if there is one.
function results.baseline_group(exp, group)
  if group.config.lr == nil or group.config.lr == 0 then return nil end
  for _, other in ipairs(results.groups(exp)) do
    if other ~= group and is_baseline_of(other.config, group.config) then return other end
  end
  return nil
end

-- Per seed, a figure of a group minus the same figure of its baseline group's run with
-- the same seed: {[seed] = difference}, over the seeds both have.
function results.paired(group, base, field)
  local by_seed = {}
  for _, cfg in ipairs(base.runs) do by_seed[results.seed_of(cfg)] = results.run_figures(cfg) end
  local diffs = {}
  for _, cfg in ipairs(group.runs) do
    local b = by_seed[results.seed_of(cfg)]
    local a = results.run_figures(cfg)
    if b and a[field] and b[field] then diffs[results.seed_of(cfg)] = a[field] - b[field] end
  end
  return diffs
end

-- A group's figures over its seeds: per figure the per-seed values ({[seed] = v}) and
-- their interval; learning gain (best GFLOPS) and reward gain (final mean reward) are the
-- per-seed differences from the lr = 0 group's run of the same seed.
function results.group_figures(exp, group)
  local f = {values = {}, iv = {}}
  for _, field in ipairs{"best", "final", "vs_openblas"} do
    local values = {}
    for _, cfg in ipairs(group.runs) do values[results.seed_of(cfg)] = results.run_figures(cfg)[field] end
    f.values[field], f.iv[field] = values, results.interval(values)
  end
  local base = results.baseline_group(exp, group)
  f.base = base
  if base then
    f.values.gain = results.paired(group, base, "best")
    f.values.reward_gain = results.paired(group, base, "final")
    f.iv.gain, f.iv.reward_gain = results.interval(f.values.gain), results.interval(f.values.reward_gain)
  end
  local samples = 0
  for _, cfg in ipairs(group.runs) do samples = samples + cfg.samples end
  f.samples = samples
  return f
end

local function seeds_text(group)
  local parts = {}
  for i, s in ipairs(group.seeds) do parts[i] = tostring(s) end
  return string.format("%d (%s)", #group.seeds, table.concat(parts, ","))
end

-- Table II over seeds: each group's figures as mean ± half-width of its 95% interval, the
-- gains as paired per-seed differences from lr = 0, and a last column of the seeds.
function results.table2_seeds(exp)
  local rows = {
    "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain | final mean reward | "
      .. "reward gain | samples | seeds |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  }
  for _, g in ipairs(results.groups(exp)) do
    local f = results.group_figures(exp, g)
    local best = f.iv.best.mean
    local p = peak(g.runs[1])
    local gain, reward_gain = "-", "-"
    if f.base then
      local base_best = results.group_figures(exp, f.base).iv.best.mean
      if f.iv.gain.mean then
        gain = (best and base_best and base_best > 0) and string.format("%.2fx (", best / base_best) or "("
        gain = gain .. (f.iv.gain.half and string.format("%+.2f ± %.2f", f.iv.gain.mean, f.iv.gain.half)
                        or string.format("%+.2f", f.iv.gain.mean)) .. " GFLOPS)"
      end
      if f.iv.reward_gain.mean then
        reward_gain = f.iv.reward_gain.half
          and string.format("%+.2f ± %.2f", f.iv.reward_gain.mean, f.iv.reward_gain.half)
          or string.format("%+.2f", f.iv.reward_gain.mean)
      end
    elseif g.config.lr == 0 then
      gain, reward_gain = "(baseline)", "(baseline)"
    end
    rows[#rows + 1] = string.format("| %s | %s | %s | %s | %s | %s | %s | %d | %s |", g.name,
                                    results.pm(f.iv.best),
                                    results.peak_ratio(best, p),
                                    f.iv.vs_openblas.mean and (results.pm(f.iv.vs_openblas) .. "x") or "-",
                                    gain, results.pm(f.iv.final), reward_gain, f.samples, seeds_text(g))
  end
  return table.concat(rows, "\n") .. "\n"
end

-- The exact tests beside a t interval, in words: "sign test 5 of 6 positive, p = 0.22;
-- permutation p = 0.03". Neither assumes the per-seed differences are normal.
function results.exact_tests_text(values)
  local sign, perm = stats.sign_test(values), stats.permutation_test(values)
  if sign.n == 0 then return "no nonzero difference: no test" end
  return string.format("sign test %d of %d positive, p = %.3g; permutation p = %.3g%s", sign.positive, sign.n,
                       sign.p, perm.p, perm.exact and "" or " (sampled)")
end

-- For each learning configuration: whether its gains over lr = 0 (paired by seed) lie
-- outside the 95% interval of no difference, i.e. whether the interval of the per-seed
-- differences excludes 0, with the exact sign and permutation tests of the same
-- differences. Markdown lines, or nil when there is nothing to compare.
function results.gains_text(exp)
  local lines = {}
  local function said(iv, values)
    return results.verdict(iv, "better than lr = 0 beyond seed noise", "worse than lr = 0 beyond seed noise",
                           "not distinguishable from lr = 0") .. " (" .. results.exact_tests_text(values) .. ")"
  end
  for _, g in ipairs(results.groups(exp)) do
    local f = results.group_figures(exp, g)
    if f.base then
      lines[#lines + 1] = string.format("- `%s` against `%s` (%d paired seeds): learning gain %s "
                                        .. "GFLOPS, %s; reward gain %s, %s.",
                                        g.name, f.base.name, f.iv.gain.n, results.pm(f.iv.gain, "%+.2f"),
                                        said(f.iv.gain, f.values.gain),
                                        results.pm(f.iv.reward_gain, "%+.2f"),
                                        said(f.iv.reward_gain, f.values.reward_gain))
    end
  end
  if #lines == 0 then return nil end
  return table.concat(lines, "\n") .. "\n"
end

-- The timing noise each run measured at its start (a fixed control kernel evaluated
-- again and again: controls.lua), one line per run, with a warning above the bound. Nil
-- when no run measured it.
function results.noise_text(exp)
  local lines, noisy = {}, {}
  for _, cfg in ipairs(exp.configs) do
    local c = cfg.control
    if type(c) == "table" and c.median and c.cov then
      lines[#lines + 1] = string.format("| %s | %d | %.2f | %.1f%% | %.2f |", cfg.name, c.n or #(c.gflops or {}),
                                        c.median, 100 * c.cov, c.slowest or 0)
      if controls.noisy(c) then noisy[#noisy + 1] = string.format("`%s` (%.1f%%)", cfg.name, 100 * c.cov) end
    end
  end
  if #lines == 0 then return nil end
  local text = "The " .. controls.name .. " of every run, evaluated again and again with the run's "
    .. "options when it started:\n\n| run | evaluations | median GFLOPS | CoV | slowest / median |\n"
    .. "| --- | ---: | ---: | ---: | ---: |\n" .. table.concat(lines, "\n") .. "\n"
  if #noisy > 0 then
    text = text .. string.format("\n**Timing noise above %.0f%%** in %s: on that node, kernels that read "
                                 .. "less than about twice that apart are not told apart, and rewards carry "
                                 .. "the noise.\n", 100 * controls.bound, table.concat(noisy, ", "))
  end
  return text
end

-- What the console says after a report: for each learning configuration, whether it beat
-- lr = 0 beyond seed noise, with its intervals (report.md's words, without Markdown).
function results.verdict_lines(exp)
  local lines = {}
  if exp.seeded then
    local text = results.gains_text(exp)
    if text then
      for line in text:gmatch("[^\n]+") do lines[#lines + 1] = (line:gsub("^%- ", ""):gsub("`", "")) end
    end
  else
    for _, cfg in ipairs(exp.configs) do
      local base = baseline(exp, cfg)
      if base and cfg.best and base.best and base.best.gflops > 0 then
        lines[#lines + 1] = string.format("%s against %s: best %.2f against %.2f GFLOPS, one seed each: "
                                          .. "no interval, so no verdict on learning (run with --seeds)",
                                          cfg.name, base.name, cfg.best.gflops, base.best.gflops)
      end
    end
  end
  if #lines == 0 then lines[1] = "no configuration has an lr = 0 counterpart: no verdict on learning" end
  return lines
end

-- The points of a group's figure: per step (or iteration) the mean over its seeds and the
-- band mean ± half-width ({x, mean, lo, hi}; lo and hi nil with one value at that x).
function results.band_series(group, field)
  local at, xs = {}, {}
  for _, cfg in ipairs(group.runs) do
    for _, p in ipairs(results.series(cfg, field)) do
      if not at[p[1]] then at[p[1]] = {}; xs[#xs + 1] = p[1] end
      local list = at[p[1]]
      list[#list + 1] = p[2]
    end
  end
  table.sort(xs)
  local points = {}
  for i, x in ipairs(xs) do
    local iv = results.interval(at[x])
    points[i] = {x, iv.mean, iv.lo, iv.hi}
  end
  return points
end

-- Two run directories side by side (e.g. a new strategy against a baseline): for each
-- configuration both hold (by name without the seed; a directory of one configuration
-- matches the other's one configuration whatever its name), each figure as mean ± half-
-- width over its seeds in A and in B, and A - B with its 95% interval (Welch: the two
-- directories' seeds are independent runs). Returns markdown.
function results.compare(a, b)
  local ga, gb = results.groups(a), results.groups(b)
  local pairs_ = {}
  if #ga == 1 and #gb == 1 then
    pairs_[1] = {ga[1], gb[1]}
  else
    for _, x in ipairs(ga) do
      for _, y in ipairs(gb) do
        if x.key == y.key then pairs_[#pairs_ + 1] = {x, y} end
      end
    end
  end
  local figures_ = {{"best", "best GFLOPS"}, {"final", "final mean reward"},
                    {"gain", "learning gain (GFLOPS)"}, {"reward_gain", "reward gain"},
                    {"vs_openblas", "vs yardstick (x)"}}
  local rows = {"| configuration | figure | A | B | A - B | 95% interval of A - B |",
                "| --- | --- | ---: | ---: | ---: | --- |"}
  for _, p in ipairs(pairs_) do
    local fa, fb = results.group_figures(a, p[1]), results.group_figures(b, p[2])
    local name = p[1].name == p[2].name and p[1].name or (p[1].name .. " / " .. p[2].name)
    for _, fig in ipairs(figures_) do
      local va, vb = fa.values[fig[1]], fb.values[fig[1]]
      local ia, ib = fa.iv[fig[1]], fb.iv[fig[1]]
      if (ia and ia.mean) or (ib and ib.mean) then
        local d = results.difference(va or {}, vb or {})
        rows[#rows + 1] = string.format("| %s | %s | %s | %s | %s | %s |", name, fig[2],
                                        results.pm(ia), results.pm(ib), results.pm(d, "%+.2f"),
                                        results.verdict(d, "A is higher", "A is lower", "no difference shown"))
      end
    end
  end
  local lines = {"# Comparison", "",
                 "A: `" .. a.dir .. "`, " .. #a.configs .. " runs; B: `" .. b.dir .. "`, "
                 .. #b.configs .. " runs.", "",
                 "Each figure is the mean ± the half-width of its 95% interval over the seeds "
                 .. "(Student t, n - 1 degrees of freedom); A - B is the difference of the means "
                 .. "with its 95% interval (Welch). Gains are against each directory's own lr = 0 "
                 .. "configuration, paired by seed.", ""}
  if #pairs_ == 0 then
    lines[#lines + 1] = "No configuration is in both directories."
  else
    lines[#lines + 1] = table.concat(rows, "\n")
  end
  local function unmatched(groups, side)
    local names = {}
    for _, g in ipairs(groups) do
      local found = false
      for _, p in ipairs(pairs_) do found = found or p[side] == g end
      if not found then names[#names + 1] = "`" .. g.name .. "`" end
    end
    return names
  end
  local only_a, only_b = unmatched(ga, 1), unmatched(gb, 2)
  if #only_a > 0 then lines[#lines + 1] = "\nOnly in A: " .. table.concat(only_a, ", ") .. "." end
  if #only_b > 0 then lines[#lines + 1] = "\nOnly in B: " .. table.concat(only_b, ", ") .. "." end
  return table.concat(lines, "\n") .. "\n", #pairs_
end

-- The markdown rows and the seeds column, which turn_results.lua's tables share.
results.md_row, results.md_head, results.seeds_text = md_row, md_head, seeds_text
results.sorted_keys = sorted_keys
return results
