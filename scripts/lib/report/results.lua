-- Reading an experiment's runs back: one entry per configuration, its per-step (or
-- per-iteration) series, its best kernel and that kernel's lineage, and the paper's
-- Table II and Table III as markdown. The figures over seeds (mean and interval, gains
-- paired by seed, two directories compared): seed_results.lua; Experiment 3's tables over
-- turns: turn_results.lua.
--
--   local results = require "report.results"
--   local exp = results.load("runs/experiment2")   -- every configuration under it
--   results.table2(exp), results.table3(exp), results.lineage_table(best.lineage)

local controls = require "method.controls"
local stages = require "method.stages"

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
                   reference = run:get("reference"), control = run:get("control"),
                   cuda_yardstick = run:get("cuda_yardstick"), gpu = run:get("gpu")}  -- a CUDA task's
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

-- What seed_results.lua's and turn_results.lua's tables share with these: the markdown
-- rows, sorted keys, a configuration's peak and its lr = 0 configuration.
results.md_row, results.md_head, results.sorted_keys = md_row, md_head, sorted_keys
results.peak, results.is_baseline_of, results.baseline = peak, is_baseline_of, baseline
return results
