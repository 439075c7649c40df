-- Reading an experiment's runs back: one entry per configuration, its per-step (or
-- per-iteration) series, its best kernel and that kernel's lineage, and the paper's
-- Table II and Table III as markdown.
--
--   local results = require "results"
--   local exp = results.load("runs/experiment2")   -- every configuration under it
--   results.table2(exp), results.table3(exp), results.lineage_table(best.lineage)

local stages = require "stages"

local results = {}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
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
                   machine = run:get("machine"), reference = run:get("reference")}
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

-- The theoretical peak the engine's bench reported for the machine, if any.
local function peak(cfg)
  local m = cfg.machine
  if type(m) ~= "table" then return nil end
  return m.peak_gflops or m.peak or (type(m.fp64_peak) == "table" and m.fp64_peak.gflops)
    or m.fp64_peak
end

local function fmt(v, pattern)
  if v == nil then return "-" end
  return string.format(pattern or "%.2f", v)
end

-- The configuration with the same swept values except lr = 0, if the sweep had one.
local function baseline(exp, cfg)
  for _, other in ipairs(exp.configs) do
    local c = other.config
    if c.lr == 0 and other ~= cfg then
      local same = true
      for k, v in pairs(cfg.config) do
        if k ~= "lr" and c[k] ~= v then same = false end
      end
      if same then return other end
    end
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

-- Table II: best GFLOPS, peak ratio, the ratio to OpenBLAS measured at the run's start,
-- the learning gain against lr = 0 (the ratio of best GFLOPS), with the final mean reward
-- and its difference from lr = 0.
function results.table2(exp)
  local rows = {
    "| configuration | best GFLOPS | peak ratio | vs OpenBLAS | learning gain | final mean reward | "
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
                                    (best and p) and string.format("%.1f%%", 100 * best / p) or "-",
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
  local m = exp.configs[1].machine
  if type(m) == "table" then
    local parts = {}
    if m.model then parts[#parts + 1] = tostring(m.model) end
    if m.simd then parts[#parts + 1] = "vector ISA " .. (stages.isas[m.simd] and stages.isas[m.simd].name or m.simd) end
    if m.target then parts[#parts + 1] = "target " .. tostring(m.target) end
    if m.cores then parts[#parts + 1] = m.cores .. " cores" end
    if peak(exp.configs[1]) then parts[#parts + 1] = string.format("FP64 peak %.1f GFLOPS", peak(exp.configs[1])) end
    if #parts > 0 then lines[2] = "Machine: " .. table.concat(parts, ", ") .. "." end
  end
  local ref = exp.configs[1].reference
  if type(ref) == "table" and ref.gflops then
    lines[#lines + 1] = string.format("OpenBLAS on the same problem (the yardstick of \"vs OpenBLAS\"): "
                                      .. "%.1f GFLOPS (mean of its timed calls; best %.1f, median %.1f) "
                                      .. "with %d threads.", ref.gflops, ref.best or 0, ref.median or 0,
                                      ref.threads or 0)
  end
  return table.concat(lines, " ") .. "\n"
end

-- Table III: the techniques of each configuration's best kernel.
function results.table3(exp)
  local header = {"configuration", "techniques of the best kernel"}
  local align = {"---", "---"}
  for _, tech in ipairs(stages.techniques) do
    header[#header + 1] = results.technique_name(exp, tech)
    align[#align + 1] = ":---:"
  end
  local rows = {"| " .. table.concat(header, " | ") .. " |", "| " .. table.concat(align, " | ") .. " |"}
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
    rows[#rows + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(rows, "\n") .. "\n"
end

-- The lineage of a kernel, root first, as a markdown table.
function results.lineage_table(lineage)
  local rows = {"| action | id | iteration | stage | status | GFLOPS |",
                "| --- | ---: | ---: | ---: | --- | ---: |"}
  for _, s in ipairs(lineage or {}) do
    local action = (s.extra and s.extra.action) or (s.parent_id and "child" or "sample")
    rows[#rows + 1] = string.format("| %s | %d | %d | %s | %s | %s |", action, s.id, s.iteration,
                                    s.stage and tostring(s.stage) or "-", s.status, fmt(s.gflops))
  end
  return table.concat(rows, "\n") .. "\n"
end

-- SQD's pools: how many kernels each stage kept after every iteration (experiment 2).
function results.pools_table(exp)
  local header = {"configuration", "iteration"}
  local align = {"---", "---:"}
  for s = 1, stages.count do
    header[#header + 1] = "stage " .. s
    align[#align + 1] = "---:"
  end
  local rows = {"| " .. table.concat(header, " | ") .. " |", "| " .. table.concat(align, " | ") .. " |"}
  for _, cfg in ipairs(exp.configs) do
    for _, m in ipairs(cfg.metrics) do
      if m.kind == "iteration" and m.pool then
        local cells = {cfg.name, tostring(m.iteration)}
        for s = 1, stages.count do cells[#cells + 1] = tostring(m.pool[s] or 0) end
        rows[#rows + 1] = "| " .. table.concat(cells, " | ") .. " |"
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

results.sorted_keys = sorted_keys
return results
