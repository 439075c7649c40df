-- The raw data behind the figures of docs/results.md, each file read once: held-out
-- comparisons (heldout.lua --out), runs (run directories, or one file of every run's
-- metrics records), a report's tables (report.md), model_check.lua's output and
-- templates.lua's re-measurement, turned into the figures over seeds the page reports.
-- recompute.lua fills the page's texts with them.
--
--   local claims = require "report.claims"
--   local d = claims.data(root)                          -- raw paths relative to root
--   local h = claims.heldout(d, "data/confirmatory/e1/heldout.json")
--   h.overall.roofline.mean, h.overall.roofline.perm_p   -- a gain over seeds, its test
--   local r = claims.runs_from_dirs(d, "data/confirmatory/e1/runs")
--   r.gain.final.mean                                    -- learned minus lr = 0, by seed
--   claims.table2_agreement(d, r, "data/confirmatory/e1/report.md")
--                                                        -- Table II recomputed, printed
--
-- A raw file that is not in the tree raises an error that claims.missing_path(err) names:
-- the figure has no raw data, which is not a wrong figure.

local heldout_figures = require "report.heldout_figures"
local results = require "report.results"
local stats = require "core.stats"
local sweep = require "engine.sweep"

local claims = {}

---------------------------------------------------------------------------------------
-- Raw files: read once, relative to the data root
---------------------------------------------------------------------------------------

-- A missing raw file is not a bug of the claim: it ends the claim as NO RAW DATA.
local Missing = {}
local function missing(path) error(setmetatable({path = path}, Missing), 0) end

-- The raw path an error names when its file is missing; nil for any other error.
function claims.missing_path(err)
  if getmetatable(err) == Missing then return err.path end
end

local Data = {}
Data.__index = Data

function claims.data(root)
  return setmetatable({root = root, cache = {}}, Data)
end

function Data:path(rel) return self.root .. "/" .. rel end

function Data:exists(rel) return sys.exists(self:path(rel)) end

-- fn() once per key: raw files and the figures computed from them.
function Data:memo(key, fn)
  if self.cache[key] == nil then self.cache[key] = fn() end
  return self.cache[key]
end

function Data:text(rel)
  return self:memo("text:" .. rel, function()
    local f = io.open(self:path(rel), "rb")
    if not f then missing(rel) end
    local s = f:read("a")
    f:close()
    return s
  end)
end

function Data:json(rel)
  return self:memo("json:" .. rel, function()
    local ok, v = pcall(json.decode, self:text(rel))
    if not ok then error(rel .. ": not valid JSON: " .. tostring(v), 0) end
    return v
  end)
end

-- One JSON record a line; with `tagged`, each line is "NAME<tab>JSON" and the record
-- gets NAME as its config.
function Data:records(rel, tagged)
  return self:memo("records:" .. rel, function()
    local out = {}
    local n = 0
    for line in self:text(rel):gmatch("[^\n]+") do
      n = n + 1
      local name, body = nil, line
      if tagged then name, body = line:match("^([^\t]+)\t(.*)$") end
      local ok, r = pcall(json.decode, body or "")
      if not ok or type(r) ~= "table" then error(string.format("%s:%d: not a JSON record", rel, n), 0) end
      if name then r.config = name end
      out[#out + 1] = r
    end
    return out
  end)
end

function Data:size(rel)
  local f = io.open(self:path(rel), "rb")
  if not f then missing(rel) end
  local n = f:seek("end")
  f:close()
  return n
end

-- The first capture of `pattern` in a raw text file; an error naming both when absent.
function Data:find(rel, pattern)
  local v = self:text(rel):match(pattern)
  if v == nil then error(rel .. ": no match for " .. pattern, 0) end
  return tonumber(v) or v
end

---------------------------------------------------------------------------------------
-- Numbers over seeds
---------------------------------------------------------------------------------------

-- The mean of a list (nil for an empty one), its least and greatest items, and fn of each.
function claims.mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return #xs > 0 and s / #xs or nil
end

function claims.range(xs)
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(xs) do lo, hi = math.min(lo, x), math.max(hi, x) end
  return lo, hi
end

function claims.map(xs, fn)
  local out = {}
  for i, x in ipairs(xs) do out[i] = fn(x) end
  return out
end

local mean, range, map = claims.mean, claims.range, claims.map

-- A learning rate as the page writes it: 0, 3e-4, 1e-4.
function claims.short_number(x)
  if x == 0 then return "0" end
  local text = string.format("%.0e", x):gsub("e%+?(%-?)0*(%d)", "e%1%2")
  return text
end

-- Per-seed values as the page reports them: the t interval, the exact sign and
-- permutation tests, and the smallest p any exact test of this many seeds can give.
function claims.over_seeds(values, scale)
  local xs = map(values, function(v) return v * (scale or 1) end)
  local iv = stats.interval(xs)
  local sign, perm = stats.sign_test(xs), stats.permutation_test(xs)
  return {values = xs, n = iv.n, mean = iv.mean, half = iv.half, lo = iv.lo, hi = iv.hi,
          sign_positive = sign.positive, sign_n = sign.n, sign_p = sign.p, perm_p = perm.p,
          smallest_p = 2 ^ (1 - #xs), tests = sign.n == 0 and "no test" or "tested",
          perm_rank = perm.p <= 2 ^ (1 - #xs) * (1 + 1e-9) and "the smallest possible" or "above the smallest possible"}
end

-- Holm's step-down procedure at family-wise `alpha` over named p-values ({name = p}):
-- per name {p =, threshold = the level its rank is compared with, passes =}, the smallest
-- p against alpha/m, the next against alpha/(m-1), ... until one fails, which stops it.
function claims.holm(ps, alpha)
  local names = {}
  for name in pairs(ps) do names[#names + 1] = name end
  table.sort(names, function(a, b) if ps[a] ~= ps[b] then return ps[a] < ps[b] end return a < b end)
  local out, stopped = {}, false
  for i, name in ipairs(names) do
    local threshold = alpha / (#names - i + 1)
    local passes = not stopped and ps[name] < threshold
    if not passes then stopped = true end
    out[name] = {p = ps[name], threshold = threshold, passes = passes, rank = i}
  end
  return out
end

-- A section's claims, in its rows' order (scripts/experiments/recompute.lua checks them).
-- A section is {name, raw = {paths}, figures = fn(data), rows}; a row is {label, text},
-- with raw or figures of its own where they differ from the section's, or {label, raw =
-- {paths}, agree = fn(data)}.
function claims.section_claims(section)
  return map(section.rows, function(row)
    return {section = section.name, label = row[1], text = row[2], raw = row.raw or section.raw,
            compute = row.figures or section.figures, agree = row.agree}
  end)
end

---------------------------------------------------------------------------------------
-- Held-out comparisons (heldout.lua --out): every kernel of both policies, per seed
---------------------------------------------------------------------------------------

local function matrix_size(prompts, part)
  for _, p in ipairs(prompts) do
    if p.part == part and type(p.size) == "string" then return tonumber(p.size:match("(%d+)%s*$")) end
  end
end

-- Per seed: each part's figures and their mean over the parts, per policy, as heldout.lua
-- computed them (report/heldout_figures.lua).
local function seed_figures(seed, parts)
  local by_part, overall = heldout_figures.seed_figures(seed.prompts, parts)
  local out = {seed = seed.seed, parts = {}, overall = overall}
  for _, part in ipairs(parts) do out.parts[part] = by_part[part] or {} end
  return out
end

local FIGURES = heldout_figures.figures

-- A scope's figures over seeds (overall or one part): per figure the gains over seeds,
-- and each policy's mean and per-seed range (verified share and roofline in percent).
local function scope_over_seeds(per_seed, pick, where)
  local scope = {base = {}, learned = {}}
  local verified = 0
  for _, f in ipairs(FIGURES) do
    local scale = (f == "ok") and 100 or 1
    local gains = {}
    local by_policy = {base = {}, learned = {}}
    for i, s in ipairs(per_seed) do
      local b, l = pick(s, "base"), pick(s, "learned")
      if not (b and l) then error(string.format("%s, seed %s: a policy wrote no kernel there", where, s.seed), 0) end
      gains[i] = l[f] - b[f]
      by_policy.base[i], by_policy.learned[i] = b[f] * scale, l[f] * scale
    end
    scope[f] = claims.over_seeds(gains, scale)
    for _, policy in ipairs{"base", "learned"} do
      local lo, hi = range(by_policy[policy])
      scope[policy][f], scope[policy][f .. "_min"], scope[policy][f .. "_max"] = mean(by_policy[policy]), lo, hi
    end
    scope[f .. "_min"] = math.min(scope.base[f .. "_min"], scope.learned[f .. "_min"])
    scope[f .. "_max"] = math.max(scope.base[f .. "_max"], scope.learned[f .. "_max"])
  end
  for _, s in ipairs(per_seed) do
    for _, policy in ipairs{"base", "learned"} do verified = verified + heldout_figures.verified(pick(s, policy)) end
  end
  scope.writes = verified == 0 and "neither policy writes them" or (verified .. (verified == 1 and " kernel verified" or " kernels verified"))
  return scope
end

-- An entry of a held-out file list: a file, or {file, seeds = {...}} for only those seeds
-- of it (a file that compared again seeds an earlier file holds).
local function entry_path(e) return type(e) == "table" and e[1] or e end

local function entry_name(e)
  if type(e) ~= "table" then return e end
  return e[1] .. " (seeds " .. table.concat(e.seeds, ",") .. ")"
end

local function entry_keeps(e, seed)
  if type(e) ~= "table" then return true end
  for _, s in ipairs(e.seeds) do if s == seed then return true end end
  return false
end

-- Held-out JSONs as one: the seeds of every file (a comparison run in pieces, each piece's
-- seeds in a file of its own), which must name the same parts and no seed twice.
local function heldout_raw(d, entries)
  local raw
  local seen = {}
  local rels = map(entries, entry_path)
  for i, rel in ipairs(rels) do
    local r = d:json(rel)
    if type(r.seeds) ~= "table" or type(r.parts) ~= "table" then
      error(rel .. ": not a heldout.lua --out file (no seeds or parts)", 0)
    end
    if not raw then
      raw = {parts = r.parts, seeds = {}, gains = (#rels == 1 and type(entries[1]) ~= "table") and r.gains or nil}
    elseif table.concat(r.parts, ",") ~= table.concat(raw.parts, ",") then
      error(string.format("%s: parts %s, %s has %s", rel, table.concat(r.parts, ","), rels[1],
                          table.concat(raw.parts, ",")), 0)
    end
    local kept = 0
    for _, seed in ipairs(r.seeds) do
      if entry_keeps(entries[i], seed.seed) then
        local key = tostring(seed.configuration) .. " seed " .. tostring(seed.seed)
        if seen[key] then error(string.format("%s: %s is also in %s", rel, key, seen[key]), 0) end
        seen[key] = rel
        raw.seeds[#raw.seeds + 1] = seed
        kept = kept + 1
      end
    end
    if kept == 0 then error(entry_name(entries[i]) .. ": none of the seeds asked for is there", 0) end
  end
  return raw
end

-- A held-out JSON's figures per learning configuration: {configs = {[name] = H}} and,
-- when there is one configuration, H itself beside. H = {seeds =, overall =, parts =
-- {[part] = scope}, per_seed = {recomputed figures}, stored = {the file's own}}. `rel`
-- is one file or a list of files whose seeds are pooled, an entry {file, seeds = {...}}
-- taking only those seeds of its file.
function claims.heldout(d, rel)
  local entries = type(rel) == "table" and rel or {rel}
  rel = table.concat(map(entries, entry_name), " + ")
  return d:memo("heldout:" .. rel, function()
    local raw = heldout_raw(d, entries)
    local by_config, order = {}, {}
    for _, seed in ipairs(raw.seeds) do
      local name = seed.configuration
      if not by_config[name] then by_config[name] = {}; order[#order + 1] = name end
      table.insert(by_config[name], seed)
    end
    local out = {configs = {}, raw = raw}
    for _, name in ipairs(order) do
      local seeds = by_config[name]
      table.sort(seeds, function(a, b) return a.seed < b.seed end)
      local per_seed = map(seeds, function(s) return seed_figures(s, raw.parts) end)
      local h = {seeds = #seeds, per_seed = per_seed, stored = seeds, parts = {},
                 overall = scope_over_seeds(per_seed, function(s, p) return s.overall[p] end, rel .. ": " .. name)}
      for _, part in ipairs(raw.parts) do
        h.parts[part] = scope_over_seeds(per_seed, function(s, p) return s.parts[part][p] end,
                                         rel .. ": " .. name .. ", part " .. part)
        h.parts[part].size = matrix_size(seeds[1].prompts, part)
      end
      -- Protocol version 5: a part where neither policy verified a kernel in any seed
      -- has no test and stays out of the mean ("with_kernels"), which names its parts.
      local written, unwritten = {}, {}
      for _, part in ipairs(raw.parts) do
        local list = h.parts[part].writes == "neither policy writes them" and unwritten or written
        list[#list + 1] = part
      end
      h.written_parts = #written > 0 and table.concat(written, ", ") or "none"
      h.unwritten_parts = #unwritten > 0 and table.concat(unwritten, ", ") or "none"
      if #written > 0 then
        for _, s in ipairs(per_seed) do
          s.with_kernels = {}
          for _, policy in ipairs{"base", "learned"} do
            s.with_kernels[policy] = heldout_figures.mean_of_parts(s.parts, written, policy)
          end
        end
        h.with_kernels = scope_over_seeds(per_seed, function(s, p) return s.with_kernels[p] end,
                                          rel .. ": " .. name .. ", parts with kernels")
        h.with_kernels.writes = nil  -- a mean of parts counts no kernels of its own
      end
      out.configs[name] = h
    end
    if #order == 1 then
      for k, v in pairs(out.configs[order[1]]) do out[k] = v end
    end
    return out
  end)
end

-- The gains the held-out JSON stored against the same recomputed from its kernels (to
-- 1e-9): "N gains" twice when all agree, else the first that differs, named.
function claims.heldout_agreement(d, rel)
  local h = claims.heldout(d, rel)
  local checked, first = 0, nil
  local function compare(what, stored, recomputed)
    local a, b = string.format("%.9f", stored), string.format("%.9f", recomputed)
    checked = checked + 1
    if a ~= b and not first then first = {what .. " " .. b, what .. " " .. a} end
  end
  local names = {}
  for name in pairs(h.configs) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local c = h.configs[name]
    for i, s in ipairs(c.stored) do
      local r = c.per_seed[i]
      for _, f in ipairs(FIGURES) do
        compare(string.format("%s seed %s overall %s", name, s.seed, f), s.overall.gain[f],
                r.overall.learned[f] - r.overall.base[f])
        for _, part in ipairs(h.raw.parts) do
          compare(string.format("%s seed %s %s %s", name, s.seed, part, f), s.parts[part].gain[f],
                  r.parts[part].learned[f] - r.parts[part].base[f])
        end
      end
    end
    local g = h.raw.gains and h.raw.gains[name]
    for i, v in ipairs(g and g.overall.roofline.values or {}) do  -- the per-seed list the tests ran on
      compare(string.format("%s gains' overall roofline value %d", name, i), v, c.overall.roofline.values[i])
    end
  end
  if first then return first[1], first[2] end
  return checked .. " gains", checked .. " gains"
end

---------------------------------------------------------------------------------------
-- Runs: each run's metrics (metrics.jsonl records), grouped by configuration and seed
---------------------------------------------------------------------------------------

-- "beta=0,lr=0.0003,opt=O3,seed=2" as a configuration; runs made before --seeds had no
-- seed in their name and are seed 1.
function claims.parse_name(name)
  local config = {}
  for k, v in name:gmatch("([^,=]+)=([^,]*)") do config[k] = tonumber(v) or v end
  return config
end

-- A run's figures, by the report's rules: the final mean reward (the last quarter of its
-- steps or iterations, results.final_reward) and the best kernel (the highest
-- max_gflops: metrics.summary records there a step's best kernel as re-measured).
local function run_figures(config, records)
  local run = {config = config, seed = config.seed or 1, metrics = records}
  run.final = results.final_reward(run)
  run.points = #results.series(run, "mean_reward")
  for _, r in ipairs(records) do
    if type(r.max_gflops) == "number" and (run.best == nil or r.max_gflops > run.best) then run.best = r.max_gflops end
  end
  return run
end

-- The records of the work items (steps, SQD groups) of a run: iterations repeat their
-- groups' counts.
function claims.items(run)
  local out = {}
  for _, r in ipairs(run.metrics) do
    if r.kind == "step" or r.kind == "group" then out[#out + 1] = r end
  end
  return out
end

-- A run's mean of fn(record) over its work items.
function claims.item_mean(run, fn)
  return mean(map(claims.items(run), fn))
end

-- The share of a run's kernels whose status is one of `statuses` (a set), in percent.
function claims.status_share(run, statuses)
  local n, hit = 0, 0
  for _, r in ipairs(claims.items(run)) do
    n = n + r.kernels
    for status, count in pairs(r.counts or {}) do
      if statuses[status] then hit = hit + count end
    end
  end
  return 100 * hit / n
end

-- The mean reward of a run's steps first..last.
function claims.reward_window(run, first, last)
  local xs = {}
  for _, r in ipairs(run.metrics) do
    if r.kind == "step" and r.step >= first and r.step <= last then xs[#xs + 1] = r.mean_reward end
  end
  if #xs ~= last - first + 1 then error(string.format("the run has %d of steps %d-%d", #xs, first, last), 0) end
  return mean(xs)
end

-- Runs grouped by their configuration without the seed (the report's names): {groups =
-- {[name] = {config =, runs = {by seed}}}, pairs = {{learned =, base =}}}: each learning
-- group with the lr = 0 group of the same other values.
local function group_runs(runs)
  local groups, order = {}, {}
  for _, run in ipairs(runs) do
    local base = {}
    for k, v in pairs(run.config) do if k ~= "seed" then base[k] = v end end
    local name = sweep.name(base)
    if not groups[name] then groups[name] = {name = name, config = base, runs = {}}; order[#order + 1] = name end
    table.insert(groups[name].runs, run)
  end
  local out = {groups = groups, pairs = {}}
  for _, name in ipairs(order) do
    local g = groups[name]
    table.sort(g.runs, function(a, b) return a.seed < b.seed end)
    g.seeds = map(g.runs, function(r) return r.seed end)
  end
  for _, name in ipairs(order) do
    local g = groups[name]
    if g.config.lr ~= 0 then
      for _, other in ipairs(order) do
        local b = groups[other]
        local same = b.config.lr == 0
        for k, v in pairs(g.config) do if k ~= "lr" and b.config[k] ~= v then same = false end end
        if same then out.pairs[#out.pairs + 1] = {learned = g, base = b} end
      end
    end
  end
  return out
end

-- Per seed, a run figure of the learning group minus the same seed's lr = 0 run's; an
-- error when the two groups do not hold the same seeds.
function claims.paired(pair, field)
  local base = {}
  for _, r in ipairs(pair.base.runs) do base[r.seed] = r end
  local diffs = {}
  for _, r in ipairs(pair.learned.runs) do
    local b = base[r.seed]
    if not b then error(string.format("%s has seed %d, %s has not", pair.learned.name, r.seed, pair.base.name), 0) end
    diffs[#diffs + 1] = r[field] - b[field]
  end
  if #diffs ~= #pair.base.runs then error(pair.base.name .. " has seeds its learning runs lack", 0) end
  return diffs
end

-- A group's figure over its seeds: stats.interval of fn(run) (a field name or a function).
function claims.group_interval(group, fn)
  if type(fn) == "string" then local field = fn; fn = function(r) return r[field] end end
  local iv = stats.interval(map(group.runs, fn))
  return {mean = iv.mean, half = iv.half, n = iv.n}
end

-- Each pair's gains (final mean reward, best kernel) and each group's intervals; with
-- one pair, its learned, base and gain beside.
local function runs_figure(runs)
  local out = group_runs(runs)
  for _, g in pairs(out.groups) do
    g.final, g.best = claims.group_interval(g, "final"), claims.group_interval(g, "best")
  end
  for _, p in ipairs(out.pairs) do
    p.gain = {final = claims.over_seeds(claims.paired(p, "final")), best = claims.over_seeds(claims.paired(p, "best"))}
  end
  if #out.pairs == 1 then
    local p = out.pairs[1]
    out.learned, out.base, out.gain = p.learned, p.base, p.gain
  end
  return out
end

-- Runs from a folder of run directories (config.json, metrics.jsonl each); with
-- `seeds` (a list), only the runs of those seeds (one half of a set run in halves).
function claims.runs_from_dirs(d, rel, seeds)
  local wanted
  if seeds then
    wanted = {}
    for _, s in ipairs(seeds) do wanted[s] = true end
  end
  local key = "runs:" .. rel .. (seeds and (" seeds " .. table.concat(seeds, ",")) or "")
  return d:memo(key, function()
    if not d:exists(rel) then missing(rel) end
    local runs = {}
    for _, name in ipairs(sys.listdir(d:path(rel))) do
      local dir = rel .. "/" .. name
      if d:exists(dir .. "/config.json") then
        local config = d:json(dir .. "/config.json")
        local run = run_figures(config.config or {}, d:records(dir .. "/metrics.jsonl"))
        run.identity = config
        if not wanted or wanted[run.seed] then runs[#runs + 1] = run end
      end
    end
    if #runs == 0 then error(rel .. ": no run directories (NAME/config.json)" .. (seeds and " of those seeds" or ""), 0) end
    return runs_figure(runs)
  end)
end

-- Runs from one file of every run's records, each naming its run (a "config" field, or
-- the first column of a tagged file).
function claims.runs_from_records(d, rel, tagged)
  return d:memo("runs:" .. rel, function()
    local by_name, order = {}, {}
    for _, r in ipairs(d:records(rel, tagged)) do
      if not by_name[r.config] then by_name[r.config] = {}; order[#order + 1] = r.config end
      table.insert(by_name[r.config], r)
    end
    local runs = map(order, function(name) return run_figures(claims.parse_name(name), by_name[name]) end)
    return runs_figure(runs)
  end)
end

---------------------------------------------------------------------------------------
-- Reports (report.lua's report.md) and model checks (model_check.lua's output)
---------------------------------------------------------------------------------------

-- A captured number, nil when nothing was captured.
local function number(s) return s and tonumber(s) end

-- The cells of a markdown table's rows whose first cell matches `first` (a pattern).
local function table_rows(text, first)
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    if line:sub(1, 1) == "|" then
      local cells = {}
      for cell in line:gmatch("|%s*([^|]-)%s*%f[|]") do cells[#cells + 1] = cell end
      if cells[1] and cells[1]:match(first) then rows[#rows + 1] = cells end
    end
  end
  return rows
end

-- Table II of a report: {[configuration] = {best =, final =, gain =, reward_gain =}}, the
-- cells as the report printed them.
function claims.report_table2(d, rel)
  local out = {}
  for _, c in ipairs(table_rows(d:text(rel), "=")) do
    if #c == 9 and c[2]:find("±", 1, true) then
      out[c[1]] = {best = c[2], final = c[6], gain = c[5]:match("%(([^)]*) GFLOPS%)") or c[5], reward_gain = c[7]}
    end
  end
  return out
end

-- The control kernel's spread per run ("Timing noise"), and the bound the report used.
function claims.report_noise(d, rel)
  local text = d:text(rel)
  local covs = {}
  for _, c in ipairs(table_rows(text, "=")) do
    if #c == 5 and c[4]:match("^[%d.]+%%$") then covs[#covs + 1] = tonumber(c[4]:match("[%d.]+")) end
  end
  if #covs == 0 then error(rel .. ": no timing-noise table", 0) end
  local bound = number(text:match("Timing noise above ([%d.]+)%%")) or 5
  local lo, hi = range(covs)
  local above = 0
  for _, c in ipairs(covs) do if c > bound then above = above + 1 end end
  return {runs = #covs, min = lo, max = hi, above = above, bound = bound}
end

-- Table II's cells recomputed from runs (as report.lua prints them) and as the report
-- printed them.
function claims.table2_agreement(d, runs, report)
  local printed = claims.report_table2(d, report)
  local got, expected = {}, {}
  local function pm(iv, fmt) return string.format(fmt .. " ± %.2f", iv.mean, iv.half) end
  local names = {}
  for name in pairs(runs.groups) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local g, row = runs.groups[name], printed[name] or {}
    got[#got + 1] = name .. " best " .. pm(g.best, "%.2f") .. ", final " .. pm(g.final, "%.2f")
    expected[#expected + 1] = name .. " best " .. tostring(row.best) .. ", final " .. tostring(row.final)
  end
  for _, p in ipairs(runs.pairs) do
    local row = printed[p.learned.name] or {}
    got[#got + 1] = string.format("%s gain %s, reward gain %s", p.learned.name, pm(p.gain.best, "%+.2f"),
                                  pm(p.gain.final, "%+.2f"))
    expected[#expected + 1] = string.format("%s gain %s, reward gain %s", p.learned.name, tostring(row.gain),
                                            tostring(row.reward_gain))
  end
  return table.concat(got, "; "), table.concat(expected, "; ")
end

-- model_check.lua's blocks: one per task and ISA, {task =, isa =, n =, compile =,
-- verified =, best =, wider =, combinations =, statuses = {[status] = count}}.
function claims.model_checks(d, rel)
  return d:memo("checks:" .. rel, function()
    local out = {}
    local cur
    for line in d:text(rel):gmatch("[^\n]+") do
      local task, isa, n = line:match("task (%S+), %S+ prompt.- for (%S+), (%d+) samples")
      if task then
        cur = {task = task, isa = isa, n = tonumber(n), statuses = {}}
        out[#out + 1] = cur
      elseif cur then
        cur.compile = cur.compile or number(line:match("^%s+compile%s+(%d+)"))
        cur.verified = cur.verified or number(line:match("^%s+verified%s+(%d+)"))
        cur.best = cur.best or number(line:match("best ([%d.]+) GFLOPS"))
        cur.wider = cur.wider or number(line:match("wider vectors than [^:]+: (%d+)"))
        cur.combinations = cur.combinations or number(line:match("(%d+) among verified"))
        local list = line:match("^%s+statuses: (.*)$")
        if list then
          for status, count in list:gmatch("(%S+)=(%d+)") do cur.statuses[status] = tonumber(count) end
        end
      end
    end
    if #out == 0 then error(rel .. ": no model_check output", 0) end
    return out
  end)
end

---------------------------------------------------------------------------------------
-- Re-measured kernels (templates.lua's compare.json)
---------------------------------------------------------------------------------------

-- Each run's best kernel and the template search's top ones re-measured in the same
-- rounds (a kernel's figure the median of its rounds): per seed, the learning run's minus
-- the lr = 0 run's, and the learning run's minus the best template kernel.
function claims.templates_compare(d, rel)
  local base, learned, best_template = {}, {}, 0
  for _, k in ipairs(d:json(rel).kernels) do
    if k.source == "templates" then
      best_template = math.max(best_template, k.median)
    else
      local seed = tonumber(k.name:match("seed (%d+)$"))
      local lr = tonumber(k.group:match("lr=([^,]+)"))
      if lr == 0 then base[seed] = k.median else learned[seed] = k.median end
    end
  end
  local gain, vs = {}, {}
  for seed in pairs(learned) do
    if not base[seed] then error("templates/compare.json: seed " .. seed .. " has no lr = 0 kernel", 0) end
  end
  local seeds = {}
  for seed in pairs(learned) do seeds[#seeds + 1] = seed end
  table.sort(seeds)
  for i, seed in ipairs(seeds) do gain[i], vs[i] = learned[seed] - base[seed], learned[seed] - best_template end
  return {gain = claims.over_seeds(gain), vs_template = claims.over_seeds(vs), best_template = best_template,
          base = stats.interval(map(seeds, function(x) return base[x] end)),
          learned = stats.interval(map(seeds, function(x) return learned[x] end))}
end

return claims
