-- Statistics over seeds: runs that differ only in their seed form one group, and each of
-- its figures is given as a mean and a 95% interval over the seeds (Student t with n - 1
-- degrees of freedom; the arithmetic is stats.lua's). Gains over lr = 0 are the per-seed
-- differences from the lr = 0 run of the same seed; two run directories compare by the
-- interval of their difference (Welch). Reads results.load's entries; the tables are
-- markdown, as results.lua's.
--
--   local seed_results = require "report.seed_results"
--   local exp = require("report.results").load("runs/experiment1")
--   seed_results.groups(exp)                -- configurations over seeds; sets exp.seeded
--   seed_results.table2_seeds(exp), seed_results.gains_text(exp)   -- Table II, the verdicts
--   seed_results.verdict_lines(exp)         -- the console's words on learning
--   seed_results.compare(a, b)              -- two run directories side by side, markdown

local results = require "report.results"
local stats = require "core.stats"
local sweep = require "engine.sweep"

local seed_results = {}

local sorted_keys, peak = results.sorted_keys, results.peak
local is_baseline_of, baseline = results.is_baseline_of, results.baseline

-- The interval arithmetic lives in stats.lua; these names stay for the report's readers.
seed_results.t975, seed_results.t_quantile = stats.t975, stats.t_quantile
seed_results.median, seed_results.interval, seed_results.difference = stats.median, stats.interval, stats.difference

-- "mean ± half-width" (only the mean with one value, "-" with none).
function seed_results.pm(iv, pattern)
  pattern = pattern or "%.2f"
  if not iv or iv.mean == nil then return "-" end
  if iv.half == nil then return string.format(pattern, iv.mean) end
  return string.format(pattern .. " ± %.2f", iv.mean, iv.half)
end

-- Whether an interval of a difference excludes 0, in words.
function seed_results.verdict(iv, better, worse, same)
  if not iv or iv.mean == nil then return "no value" end
  if iv.half == nil then return "one value: no interval" end
  local where = string.format("[%+.2f, %+.2f]", iv.lo, iv.hi)
  if iv.lo > 0 then return "the interval " .. where .. " excludes 0: " .. better end
  if iv.hi < 0 then return "the interval " .. where .. " excludes 0: " .. worse end
  return "the interval " .. where .. " includes 0: " .. same
end

-- The seed of a run: its configuration's (runs of --seeds), else its options'.
function seed_results.seed_of(cfg)
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
function seed_results.groups(exp)
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
    table.sort(g.runs, function(a, b) return seed_results.seed_of(a) < seed_results.seed_of(b) end)
    g.seeds = {}
    for i, cfg in ipairs(g.runs) do g.seeds[i] = seed_results.seed_of(cfg) end
    if #g.runs > 1 then exp.seeded = true end
  end
  exp.groups = groups
  return groups
end

-- One run's figures: best GFLOPS, final mean reward, the ratio to the yardstick (the fastest library).
function seed_results.run_figures(cfg)
  local best = cfg.best and cfg.best.gflops
  local ref = cfg.reference and cfg.reference.gflops
  return {best = best, final = results.final_reward(cfg),
          vs_openblas = (best and ref and ref > 0) and best / ref or nil}
end

-- The group of the same swept values with lr = 0, if there is one.
function seed_results.baseline_group(exp, group)
  if group.config.lr == nil or group.config.lr == 0 then return nil end
  for _, other in ipairs(seed_results.groups(exp)) do
    if other ~= group and is_baseline_of(other.config, group.config) then return other end
  end
  return nil
end

-- Per seed, a figure of a group minus the same figure of its baseline group's run with
-- the same seed: {[seed] = difference}, over the seeds both have.
function seed_results.paired(group, base, field)
  local by_seed = {}
  for _, cfg in ipairs(base.runs) do by_seed[seed_results.seed_of(cfg)] = seed_results.run_figures(cfg) end
  local diffs = {}
  for _, cfg in ipairs(group.runs) do
    local b = by_seed[seed_results.seed_of(cfg)]
    local a = seed_results.run_figures(cfg)
    if b and a[field] and b[field] then diffs[seed_results.seed_of(cfg)] = a[field] - b[field] end
  end
  return diffs
end

-- A group's figures over its seeds: per figure the per-seed values ({[seed] = v}) and
-- their interval; learning gain (best GFLOPS) and reward gain (final mean reward) are the
-- per-seed differences from the lr = 0 group's run of the same seed.
function seed_results.group_figures(exp, group)
  local f = {values = {}, iv = {}}
  for _, field in ipairs{"best", "final", "vs_openblas"} do
    local values = {}
    for _, cfg in ipairs(group.runs) do values[seed_results.seed_of(cfg)] = seed_results.run_figures(cfg)[field] end
    f.values[field], f.iv[field] = values, seed_results.interval(values)
  end
  local base = seed_results.baseline_group(exp, group)
  f.base = base
  if base then
    f.values.gain = seed_results.paired(group, base, "best")
    f.values.reward_gain = seed_results.paired(group, base, "final")
    f.iv.gain, f.iv.reward_gain = seed_results.interval(f.values.gain), seed_results.interval(f.values.reward_gain)
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
function seed_results.table2_seeds(exp)
  local rows = {
    "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain | final mean reward | "
      .. "reward gain | samples | seeds |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  }
  for _, g in ipairs(seed_results.groups(exp)) do
    local f = seed_results.group_figures(exp, g)
    local best = f.iv.best.mean
    local p = peak(g.runs[1])
    local gain, reward_gain = "-", "-"
    if f.base then
      local base_best = seed_results.group_figures(exp, f.base).iv.best.mean
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
                                    seed_results.pm(f.iv.best),
                                    results.peak_ratio(best, p),
                                    f.iv.vs_openblas.mean and (seed_results.pm(f.iv.vs_openblas) .. "x") or "-",
                                    gain, seed_results.pm(f.iv.final), reward_gain, f.samples, seeds_text(g))
  end
  return table.concat(rows, "\n") .. "\n"
end

-- Lines that say which configurations' best kernels read above the peak, or nil.
function seed_results.peak_warnings(exp)
  local lines = {}
  for _, g in ipairs(seed_results.groups(exp)) do
    local best = exp.seeded and seed_results.group_figures(exp, g).iv.best.mean
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
function seed_results.tasks_table(exp)
  local rows = {
    "| configuration | task | kernels | verified | best (% of the roofline) | final mean reward | seeds |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  }
  local any = false
  for _, g in ipairs(seed_results.groups(exp)) do
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
                                      seed_results.pm(seed_results.interval(finals)), #g.runs)
    end
  end
  return any and (table.concat(rows, "\n") .. "\n") or nil
end

-- The exact tests beside a t interval, in words: "sign test 5 of 6 positive, p = 0.22;
-- permutation p = 0.03". Neither assumes the per-seed differences are normal.
function seed_results.exact_tests_text(values)
  local sign, perm = stats.sign_test(values), stats.permutation_test(values)
  if sign.n == 0 then return "no nonzero difference: no test" end
  return string.format("sign test %d of %d positive, p = %.3g; permutation p = %.3g%s", sign.positive, sign.n,
                       sign.p, perm.p, perm.exact and "" or " (sampled)")
end

-- For each learning configuration: whether its gains over lr = 0 (paired by seed) lie
-- outside the 95% interval of no difference, i.e. whether the interval of the per-seed
-- differences excludes 0, with the exact sign and permutation tests of the same
-- differences. Markdown lines, or nil when there is nothing to compare.
function seed_results.gains_text(exp)
  local lines = {}
  local function said(iv, values)
    return seed_results.verdict(iv, "better than lr = 0 beyond seed noise", "worse than lr = 0 beyond seed noise",
                           "not distinguishable from lr = 0") .. " (" .. seed_results.exact_tests_text(values) .. ")"
  end
  for _, g in ipairs(seed_results.groups(exp)) do
    local f = seed_results.group_figures(exp, g)
    if f.base then
      lines[#lines + 1] = string.format("- `%s` against `%s` (%d paired seeds): learning gain %s "
                                        .. "GFLOPS, %s; reward gain %s, %s.",
                                        g.name, f.base.name, f.iv.gain.n, seed_results.pm(f.iv.gain, "%+.2f"),
                                        said(f.iv.gain, f.values.gain),
                                        seed_results.pm(f.iv.reward_gain, "%+.2f"),
                                        said(f.iv.reward_gain, f.values.reward_gain))
    end
  end
  if #lines == 0 then return nil end
  return table.concat(lines, "\n") .. "\n"
end

-- What the console says after a report: for each learning configuration, whether it beat
-- lr = 0 beyond seed noise, with its intervals (report.md's words, without Markdown).
function seed_results.verdict_lines(exp)
  local lines = {}
  if exp.seeded then
    local text = seed_results.gains_text(exp)
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
function seed_results.band_series(group, field)
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
    local iv = seed_results.interval(at[x])
    points[i] = {x, iv.mean, iv.lo, iv.hi}
  end
  return points
end

-- Two run directories side by side (e.g. a new strategy against a baseline): for each
-- configuration both hold (by name without the seed; a directory of one configuration
-- matches the other's one configuration whatever its name), each figure as mean ± half-
-- width over its seeds in A and in B, and A - B with its 95% interval (Welch: the two
-- directories' seeds are independent runs). Returns markdown.
function seed_results.compare(a, b)
  local ga, gb = seed_results.groups(a), seed_results.groups(b)
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
    local fa, fb = seed_results.group_figures(a, p[1]), seed_results.group_figures(b, p[2])
    local name = p[1].name == p[2].name and p[1].name or (p[1].name .. " / " .. p[2].name)
    for _, fig in ipairs(figures_) do
      local va, vb = fa.values[fig[1]], fb.values[fig[1]]
      local ia, ib = fa.iv[fig[1]], fb.iv[fig[1]]
      if (ia and ia.mean) or (ib and ib.mean) then
        local d = seed_results.difference(va or {}, vb or {})
        rows[#rows + 1] = string.format("| %s | %s | %s | %s | %s | %s |", name, fig[2],
                                        seed_results.pm(ia), seed_results.pm(ib), seed_results.pm(d, "%+.2f"),
                                        seed_results.verdict(d, "A is higher", "A is lower", "no difference shown"))
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

-- The seeds column, which turn_results.lua's tables share.
seed_results.seeds_text = seeds_text
return seed_results
