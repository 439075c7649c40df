-- Recomputes the figures of docs/results.md from the raw data in the tree and checks each
-- against the page's text: every interval (mean ± half-width of the 95% Student t
-- interval over seeds, stats.interval), every exact sign and permutation p-value the text
-- gives, and the figures read from raw files (model checks, the pretraining's record).
--
--   engine recompute.lua                              # the repository's docs/results.md
--   engine recompute.lua --results=/tmp/results.md    # another copy of the page
--   engine recompute.lua --data=DIR                   # raw paths relative to DIR
--
-- A claim is {section, label, raw = {paths}, text, compute}: `compute(data)` returns a
-- table of figures; `text` is the page's exact text with each figure written as a slot
-- "{name:%fmt}" (a dotted name into that table, a string.format pattern; a list prints
-- its items joined by ", "). The claim is ok when the text filled from the raw data is on
-- the page (whitespace runs count as one space). Claims with `agree` instead check that
-- two records of the same figure in the tree agree (a stored figure and its
-- recomputation). One line per claim: "ok", "MISMATCH expected X got Y" (X from the raw
-- data, Y from the page), "NO RAW DATA" or "ERROR"; any but ok fails the script.
--
-- One file over 600 lines: the claims' texts name the figures that the readers below
-- compute, and a reader's fields are only defined by the claims that use them.
--
-- To add a section, append its claims to M.claims(). A confirmatory experiment's claims
-- come from M.confirmatory_claims(section, dir, texts): the same figures for every
-- experiment, each experiment's own texts.

local cli = require "cli"
local results = require "results"
local stats = require "stats"
local sweep = require "engine.sweep"

local M = {}

-- The repository root: two folders above this script (scripts/experiments/).
local function default_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  local dir = source:match("^(.*)/[^/]*$") or "."
  return dir .. "/../.."
end

M.spec = {
  description = "Recompute every figure of docs/results.md from the raw data in the tree "
    .. "and check it against the page's text.",
  options = {
    {"results", "", "the page to check (default: docs/results.md of the repository)"},
    {"data", "", "the folder the raw files' paths are relative to (default: the repository root)"},
    cli.debug_option,
  },
}

---------------------------------------------------------------------------------------
-- Raw files: read once, relative to the data root
---------------------------------------------------------------------------------------

-- A missing raw file is not a bug of the claim: it ends the claim as NO RAW DATA.
local Missing = {}
local function missing(path) error(setmetatable({path = path}, Missing), 0) end

local Data = {}
Data.__index = Data

function M.data(root)
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

local function mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return #xs > 0 and s / #xs or nil
end

local function range(xs)
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(xs) do lo, hi = math.min(lo, x), math.max(hi, x) end
  return lo, hi
end

local function map(xs, fn)
  local out = {}
  for i, x in ipairs(xs) do out[i] = fn(x) end
  return out
end

-- A learning rate as the page writes it: 0, 3e-4, 1e-4.
function M.short_number(x)
  if x == 0 then return "0" end
  local text = string.format("%.0e", x):gsub("e%+?(%-?)0*(%d)", "e%1%2")
  return text
end

-- Per-seed values as the page reports them: the t interval, the exact sign and
-- permutation tests, and the smallest p any exact test of this many seeds can give.
function M.over_seeds(values, scale)
  local xs = map(values, function(v) return v * (scale or 1) end)
  local iv = stats.interval(xs)
  local sign, perm = stats.sign_test(xs), stats.permutation_test(xs)
  return {values = xs, n = iv.n, mean = iv.mean, half = iv.half, lo = iv.lo, hi = iv.hi,
          sign_positive = sign.positive, sign_n = sign.n, sign_p = sign.p, perm_p = perm.p,
          smallest_p = 2 ^ (1 - #xs), tests = sign.n == 0 and "no test" or "tested",
          perm_rank = perm.p <= 2 ^ (1 - #xs) * (1 + 1e-9) and "the smallest possible" or "above the smallest possible"}
end

---------------------------------------------------------------------------------------
-- Held-out comparisons (heldout.lua --out): every kernel of both policies, per seed
---------------------------------------------------------------------------------------

local function matrix_size(prompts, part)
  for _, p in ipairs(prompts) do
    if p.part == part and type(p.size) == "string" then return tonumber(p.size:match("(%d+)%s*$")) end
  end
end

-- One policy's figures over a part's kernels (heldout.lua's rule): mean reward, verified
-- share, mean roofline score; nil when the policy wrote none there.
local function policy_figures(prompts, part, policy)
  local n, reward, ok, roofline = 0, 0, 0, 0
  for _, p in ipairs(prompts) do
    if p.part == part then
      for _, k in ipairs(p.kernels) do
        if k.policy == policy then
          n, reward = n + 1, reward + k.reward
          ok = ok + (k.status == "ok" and 1 or 0)
          roofline = roofline + k.roofline
        end
      end
    end
  end
  if n == 0 then return nil end
  return {reward = reward / n, ok = ok / n, roofline = roofline / n, verified = ok}
end

-- Per seed: each part's figures and their mean over the parts, per policy.
local function seed_figures(seed, parts)
  local out = {seed = seed.seed, parts = {}, overall = {base = {}, learned = {}}}
  for _, policy in ipairs{"base", "learned"} do
    local sums = {reward = 0, ok = 0, roofline = 0}
    local n = 0
    for _, part in ipairs(parts) do
      local f = policy_figures(seed.prompts, part, policy)
      out.parts[part] = out.parts[part] or {}
      out.parts[part][policy] = f
      if f then
        n = n + 1
        for k in pairs(sums) do sums[k] = sums[k] + f[k] end
      end
    end
    for k in pairs(sums) do out.overall[policy][k] = sums[k] / n end
  end
  return out
end

local FIGURES = {"reward", "ok", "roofline"}

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
    scope[f] = M.over_seeds(gains, scale)
    for _, policy in ipairs{"base", "learned"} do
      local lo, hi = range(by_policy[policy])
      scope[policy][f], scope[policy][f .. "_min"], scope[policy][f .. "_max"] = mean(by_policy[policy]), lo, hi
    end
    scope[f .. "_min"] = math.min(scope.base[f .. "_min"], scope.learned[f .. "_min"])
    scope[f .. "_max"] = math.max(scope.base[f .. "_max"], scope.learned[f .. "_max"])
  end
  for _, s in ipairs(per_seed) do
    for _, policy in ipairs{"base", "learned"} do verified = verified + (pick(s, policy).verified or 0) end
  end
  scope.writes = verified == 0 and "neither policy writes them" or (verified .. " kernels verified")
  return scope
end

-- A held-out JSON's figures per learning configuration: {configs = {[name] = H}} and,
-- when there is one configuration, H itself beside. H = {seeds =, overall =, parts =
-- {[part] = scope}, per_seed = {recomputed figures}, stored = {the file's own}}.
function M.heldout(d, rel)
  return d:memo("heldout:" .. rel, function()
    local raw = d:json(rel)
    if type(raw.seeds) ~= "table" or type(raw.parts) ~= "table" then
      error(rel .. ": not a heldout.lua --out file (no seeds or parts)", 0)
    end
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
function M.heldout_agreement(d, rel)
  local h = M.heldout(d, rel)
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
function M.parse_name(name)
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
local function items(run)
  local out = {}
  for _, r in ipairs(run.metrics) do
    if r.kind == "step" or r.kind == "group" then out[#out + 1] = r end
  end
  return out
end

-- A run's mean of fn(record) over its work items.
function M.item_mean(run, fn)
  return mean(map(items(run), fn))
end

-- The share of a run's kernels whose status is one of `statuses` (a set), in percent.
function M.status_share(run, statuses)
  local n, hit = 0, 0
  for _, r in ipairs(items(run)) do
    n = n + r.kernels
    for status, count in pairs(r.counts or {}) do
      if statuses[status] then hit = hit + count end
    end
  end
  return 100 * hit / n
end

-- The mean reward of a run's steps first..last.
function M.reward_window(run, first, last)
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
function M.paired(pair, field)
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
function M.group_interval(group, fn)
  if type(fn) == "string" then local field = fn; fn = function(r) return r[field] end end
  local iv = stats.interval(map(group.runs, fn))
  return {mean = iv.mean, half = iv.half, n = iv.n}
end

-- Each pair's gains (final mean reward, best kernel) and each group's intervals; with
-- one pair, its learned, base and gain beside.
local function runs_figure(runs)
  local out = group_runs(runs)
  for _, g in pairs(out.groups) do
    g.final, g.best = M.group_interval(g, "final"), M.group_interval(g, "best")
  end
  for _, p in ipairs(out.pairs) do
    p.gain = {final = M.over_seeds(M.paired(p, "final")), best = M.over_seeds(M.paired(p, "best"))}
  end
  if #out.pairs == 1 then
    local p = out.pairs[1]
    out.learned, out.base, out.gain = p.learned, p.base, p.gain
  end
  return out
end

-- Runs from a folder of run directories (config.json, metrics.jsonl each).
function M.runs_from_dirs(d, rel)
  return d:memo("runs:" .. rel, function()
    if not d:exists(rel) then missing(rel) end
    local runs = {}
    for _, name in ipairs(sys.listdir(d:path(rel))) do
      local dir = rel .. "/" .. name
      if d:exists(dir .. "/config.json") then
        local config = d:json(dir .. "/config.json")
        runs[#runs + 1] = run_figures(config.config or {}, d:records(dir .. "/metrics.jsonl"))
        runs[#runs].identity = config
      end
    end
    if #runs == 0 then error(rel .. ": no run directories (NAME/config.json)", 0) end
    return runs_figure(runs)
  end)
end

-- Runs from one file of every run's records, each naming its run (a "config" field, or
-- the first column of a tagged file).
function M.runs_from_records(d, rel, tagged)
  return d:memo("runs:" .. rel, function()
    local by_name, order = {}, {}
    for _, r in ipairs(d:records(rel, tagged)) do
      if not by_name[r.config] then by_name[r.config] = {}; order[#order + 1] = r.config end
      table.insert(by_name[r.config], r)
    end
    local runs = map(order, function(name) return run_figures(M.parse_name(name), by_name[name]) end)
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
function M.report_table2(d, rel)
  local out = {}
  for _, c in ipairs(table_rows(d:text(rel), "=")) do
    if #c == 9 and c[2]:find("±", 1, true) then
      out[c[1]] = {best = c[2], final = c[6], gain = c[5]:match("%(([^)]*) GFLOPS%)") or c[5], reward_gain = c[7]}
    end
  end
  return out
end

-- The control kernel's spread per run ("Timing noise"), and the bound the report used.
function M.report_noise(d, rel)
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

-- model_check.lua's blocks: one per task and ISA, {task =, isa =, n =, compile =,
-- verified =, best =, wider =, combinations =, statuses = {[status] = count}}.
function M.model_checks(d, rel)
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

local function percent(part, whole) return 100 * part / whole end

-- 60000 as "60,000".
local function thousands(n)
  local s = string.format("%d", n)
  repeat local k; s, k = s:gsub("^(%d+)(%d%d%d)", "%1,%2") until k == 0
  return s
end

---------------------------------------------------------------------------------------
-- The page's text: templates with slots, matched against the page
---------------------------------------------------------------------------------------

local function squeeze(s) return (s:gsub("%s+", " ")) end

local SLOT = "{([%w_%.]+):(%%[^}]*)}"

-- The value at a dotted name in a figures table.
local function lookup(figures, name)
  local v = figures
  for key in name:gmatch("[^.]+") do
    if type(v) ~= "table" then v = nil; break end
    v = v[tonumber(key) or key]
  end
  if v == nil then error("the figures have no value '" .. name .. "'", 0) end
  return v
end

-- One value in a slot's format (a list: its items joined by ", "); -0 prints as 0.
local function format_value(fmt, v)
  if type(v) == "table" then return table.concat(map(v, function(x) return format_value(fmt, x) end), ", ") end
  if math.type(v) == "float" and v == 0 then v = 0.0 end
  return string.format(fmt, v)
end

-- The template's slot strings filled from the figures, in order.
function M.fill(template, figures)
  local texts = {}
  for name, fmt in template:gmatch(SLOT) do texts[#texts + 1] = format_value(fmt, lookup(figures, name)) end
  local i = 0
  local text = template:gsub(SLOT, function() i = i + 1; return texts[i] end)
  return text, texts
end

-- The template as a Lua pattern whose captures are its slots.
local function loose_pattern(template)
  local parts = {}
  local pos = 1
  for s, e in function() return template:find(SLOT, pos) end do
    parts[#parts + 1] = template:sub(pos, s - 1):gsub("%p", "%%%0")
    parts[#parts + 1] = "(.-)"
    pos = e + 1
  end
  parts[#parts + 1] = template:sub(pos):gsub("%p", "%%%0")
  return table.concat(parts)
end

-- What the page says in the template's slots, where its words around them are found
-- (no slot longer than a table cell), or nil.
local function page_slots(page, template)
  local pattern = loose_pattern(template)
  local init = 1
  while true do
    local found = table.pack(page:find(pattern, init))
    if not found[1] then return nil end
    local ok = true
    for i = 3, found.n do ok = ok and #found[i] <= 80 end
    if ok then return table.move(found, 3, found.n, 1, {}) end
    init = found[1] + 1
  end
end

-- Checks one claim's text against the page: "ok", or a mismatch's line.
local function check_text(page, claim, figures)
  local template = squeeze(claim.text)
  local expected, slots = M.fill(template, figures)
  if page:find(expected, 1, true) then return "ok", table.concat(slots, ", ") end
  local said = page_slots(page, template)
  if not said then
    return "MISMATCH", string.format("expected %q (raw data) got no such text in the page", expected)
  end
  local diffs = {}
  for i, s in ipairs(slots) do
    if said[i] ~= s then diffs[#diffs + 1] = string.format("expected %q (raw data) got %q (page)", s, said[i]) end
  end
  if #diffs == 0 then
    diffs[1] = string.format("expected %q (raw data) got %q (page)", expected, table.concat(said, ", "))
  end
  return "MISMATCH", table.concat(diffs, "; ")
end

---------------------------------------------------------------------------------------
-- Claims
---------------------------------------------------------------------------------------

local function claim_line(status, claim, detail)
  local line = string.format("%-11s [%s] %s", status, claim.section, claim.label)
  if detail and detail ~= "" then line = line .. ": " .. detail end
  return line
end

-- Checks one claim: its status and its line.
function M.check(claim, d, page)
  for _, rel in ipairs(claim.raw or {}) do
    if not d:exists(rel) then return "NO RAW DATA", claim_line("NO RAW DATA", claim, rel) end
  end
  local ok, status, detail = pcall(function()
    if claim.agree then
      local got, expected = claim.agree(d)
      if got == expected then return "ok", nil end
      return "MISMATCH", string.format("expected %q (stored) got %q (recomputed)", expected, got)
    end
    return check_text(page, claim, claim.compute(d))
  end)
  if not ok then
    if getmetatable(status) == Missing then return "NO RAW DATA", claim_line("NO RAW DATA", claim, status.path) end
    return "ERROR", claim_line("ERROR", claim, tostring(status))
  end
  return status, claim_line(status, claim, detail)
end

-- The figures a confirmatory experiment's texts can name, each from its raw data folder.
-- heldout: heldout.json (M.heldout's fields); heldout_train: heldout_train.json (the
-- training prompts, E2); runs: runs/ (learned, base, gain, and the runs' settings);
-- times: the durations recorded beside them; noise: report.md's control-kernel table.
M.confirmatory_figures = {
  heldout = {files = {"heldout.json"}, compute = function(d, dir)
    local h = M.heldout(d, dir .. "/heldout.json")
    -- the protocol's rule: the primary permutation test below 0.05, with a positive mean
    h.verdict = (h.overall.roofline.perm_p < 0.05 and h.overall.roofline.mean > 0) and "confirmed" or "not confirmed"
    return h
  end},
  heldout_train = {files = {"heldout_train.json"},
                   compute = function(d, dir) return M.heldout(d, dir .. "/heldout_train.json") end},
  runs = {files = {"runs"}, compute = function(d, dir)
    local r = M.runs_from_dirs(d, dir .. "/runs")
    if not r.learned then
      error(string.format("%s/runs: expected one learning configuration beside its lr = 0 runs, found %d pairs",
                          dir, #r.pairs), 0)
    end
    local first = r.learned.runs[1]
    local settings = first.identity
    local seeds = r.learned.seeds
    return {learned = r.learned, base = r.base, gain = r.gain, points = first.points, opt = first.config.opt,
            base_lr = M.short_number(r.base.config.lr), learned_lr = M.short_number(r.learned.config.lr),
            final_points = math.max(1, first.points // 4), G = settings.G, size = settings.size,
            prompts_per_step = settings.prompts_per_step, seeds = #seeds, last_seed = seeds[#seeds],
            runs = #r.learned.runs + #r.base.runs}
  end},
  times = {files = {"README.md", "times.txt"}, compute = function(d, dir)
    return {runs_min = d:find(dir .. "/README.md", "# (%d+) min %("),
            heldout_min = math.floor(d:find(dir .. "/times.txt", "seconds=(%d+)") / 60 + 0.5)}
  end},
  noise = {files = {"report.md"}, compute = function(d, dir) return M.report_noise(d, dir .. "/report.md") end},
  -- templates.lua's re-measurement: each run's best kernel and the search's top ones in
  -- the same rounds (a kernel's figure the median of its rounds)
  templates = {files = {"templates/compare.json"}, compute = function(d, dir)
    local base, learned, best_template = {}, {}, 0
    for _, k in ipairs(d:json(dir .. "/templates/compare.json").kernels) do
      if k.source == "templates" then
        best_template = math.max(best_template, k.median)
      else
        local seed = tonumber(k.name:match("seed (%d+)$"))
        local lr = tonumber(k.group:match("lr=([^,]+)"))
        if lr == 0 then base[seed] = k.median else learned[seed] = k.median end
      end
    end
    local gain, vs = {}, {}
    for seed, v in pairs(learned) do
      if not base[seed] then error("templates/compare.json: seed " .. seed .. " has no lr = 0 kernel", 0) end
    end
    local seeds = {}
    for seed in pairs(learned) do seeds[#seeds + 1] = seed end
    table.sort(seeds)
    for i, seed in ipairs(seeds) do gain[i], vs[i] = learned[seed] - base[seed], learned[seed] - best_template end
    return {gain = M.over_seeds(gain), vs_template = M.over_seeds(vs), best_template = best_template,
            base = stats.interval(map(seeds, function(x) return base[x] end)),
            learned = stats.interval(map(seeds, function(x) return learned[x] end))}
  end},
}

-- The claims of a confirmatory experiment: `texts` is a list of {label, figure, text},
-- the figure one of M.confirmatory_figures. Beside them, two agreements: the held-out
-- gains the JSON stored against those recomputed from its kernels, and report.md's
-- Table II against the runs' metrics.
function M.confirmatory_claims(section, dir, texts)
  local claims = {}
  for _, t in ipairs(texts) do
    local figure = M.confirmatory_figures[t.figure]
    if not figure then error(section .. ": no figure '" .. tostring(t.figure) .. "' for " .. t.label, 2) end
    claims[#claims + 1] = {section = section, label = t.label, text = t.text,
                           raw = map(figure.files, function(f) return dir .. "/" .. f end),
                           compute = function(d) return figure.compute(d, dir) end}
  end
  claims[#claims + 1] = {
    section = section, label = "heldout.json's stored gains equal those recomputed from its kernels",
    raw = {dir .. "/heldout.json"}, agree = function(d) return M.heldout_agreement(d, dir .. "/heldout.json") end}
  claims[#claims + 1] = {
    section = section, label = "report.md's Table II equals the runs' metrics",
    raw = {dir .. "/report.md", dir .. "/runs"},
    agree = function(d) return M.table2_agreement(d, M.runs_from_dirs(d, dir .. "/runs"), dir .. "/report.md") end}
  return claims
end

-- Table II's cells recomputed from runs (as report.lua prints them) and as the report
-- printed them.
function M.table2_agreement(d, runs, report)
  local printed = M.report_table2(d, report)
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

-- Confirmatory E1's texts in docs/results.md.
M.e1_texts = {
  {label = "runs: steps, prompts, G, size, seeds", figure = "runs",
   text = "configurations ({points:%d} steps of {prompts_per_step:%d} prompts x G = {G:%d} at {size:%d}^3, {opt:%s}, "
     .. "`lr = {base_lr:%s}` and `lr = {learned_lr:%s}`) with seeds 1 to {last_seed:%d}"},
  {label = "runs: seeds of the secondary table", figure = "runs",
   text = "| figure (learned minus base, {seeds:%d} seeds) |"},
  {label = "runs: steps of what it says", figure = "runs", text = "What it says: {points:%d} steps of GRPO"},
  {label = "durations: runs (README.md), comparison (times.txt)", figure = "times",
   text = "EPYC ({runs_min:%d} min for the runs, {heldout_min:%d} min for the comparison:"},
  {label = "primary: overall roofline-score gain, mean ± t half-width", figure = "heldout",
   text = "**Primary metric, the overall held-out roofline-score gain: {overall.roofline.mean:%+.2f} ± "
     .. "{overall.roofline.half:%.2f} points**"},
  {label = "primary: 95% t interval", figure = "heldout",
   text = "(95% t interval [{overall.roofline.lo:%+.2f}, {overall.roofline.hi:%+.2f}])"},
  {label = "primary: per-seed gains", figure = "heldout",
   text = "every seed gained ({overall.roofline.values:%+.2f});"},
  {label = "primary: exact permutation test", figure = "heldout",
   text = "**exact permutation test p = {overall.roofline.perm_p:%.3g}** ({overall.roofline.perm_rank:%s} "
     .. "with ten seeds)"},
  {label = "primary: exact sign test", figure = "heldout",
   text = "sign test {overall.roofline.sign_positive:%d} of {overall.roofline.sign_n:%d}, "
     .. "p = {overall.roofline.sign_p:%.3g}."},
  {label = "primary: the protocol's verdict (permutation p < 0.05, positive mean)", figure = "heldout",
   text = "**learning is {verdict:%s} for E1**"},
  {label = "primary: base and learned roofline scores, mean of the parts", figure = "heldout",
   text = "kernels reached {overall.base.roofline:%.1f}% of the machine's FP64 roofline on average over the three "
     .. "parts, the learned policies' {overall.learned.roofline:%.1f}%."},
  {label = "secondary: other size, roofline score", figure = "heldout",
   text = "| held-out, other size ({parts.sizes.size:%d}^3): roofline score | {parts.sizes.roofline.mean:%+.2f} ± "
     .. "{parts.sizes.roofline.half:%.2f} points ({parts.sizes.base.roofline:%.1f}% -> "
     .. "{parts.sizes.learned.roofline:%.1f}%) | "
     .. "{parts.sizes.roofline.sign_positive:%d} of {parts.sizes.roofline.sign_n:%d} positive, "
     .. "p = {parts.sizes.roofline.sign_p:%.3f} |"},
  {label = "secondary: other wordings, roofline score", figure = "heldout",
   text = "| held-out, other wordings: roofline score | {parts.wordings.roofline.mean:%+.2f} ± "
     .. "{parts.wordings.roofline.half:%.2f} points | permutation p = {parts.wordings.roofline.perm_p:%.2f} |"},
  {label = "secondary: held-out tasks, roofline score", figure = "heldout",
   text = "| held-out, held-out tasks: roofline score | {parts.tasks.roofline.mean:%.0f} ({parts.tasks.writes:%s}) | "
     .. "{parts.tasks.roofline.tests:%s} |"},
  {label = "secondary: verified share, mean of the parts", figure = "heldout",
   text = "| held-out, verified share (mean of the parts) | {overall.ok.mean:%+.1f} ± {overall.ok.half:%.1f} points | "
     .. "permutation p = {overall.ok.perm_p:%.2f} |"},
  {label = "secondary: held-out mean reward", figure = "heldout",
   text = "| held-out, mean reward (Eq. 3) | {overall.reward.mean:%+.2f} ± {overall.reward.half:%.2f} | "
     .. "p = {overall.reward.perm_p:%.3f} |"},
  {label = "secondary: run's final mean reward, paired by seed", figure = "runs",
   text = "| run's final mean reward (last {final_points:%d} steps) | "
     .. "{gain.final.mean:%+.2f} ± {gain.final.half:%.2f} "
     .. "({base.final.mean:%.1f} -> {learned.final.mean:%.1f}) | p = {gain.final.perm_p:%.3f} |"},
  {label = "secondary: best kernel, re-measured, paired by seed", figure = "runs",
   text = "| best kernel, re-measured | {gain.best.mean:%+.2f} ± {gain.best.half:%.2f} GFLOPS "
     .. "({base.best.mean:%.1f} -> {learned.best.mean:%.1f}) | p = {gain.best.perm_p:%.2f} |"},
  {label = "other wordings: verified share, range over policies and seeds", figure = "heldout",
   text = "verify {parts.wordings.ok_min:%.0f} to {parts.wordings.ok_max:%.0f}% of their kernels"},
  {label = "control kernel: runs above the bound, largest spread (report.md)", figure = "noise",
   text = "the {bound:%.0f}% bound in {above:%d} of the {runs:%d} runs (up to {max:%.0f}%,"},
  {label = "secondary: best kernels against each other and the template search, re-measured together",
   figure = "templates",
   text = "| best kernels and the template search, re-measured together | {gain.mean:%+.2f} ± {gain.half:%.2f} "
     .. "GFLOPS ({base.mean:%.1f} -> {learned.mean:%.1f}); learned minus the best template kernel "
     .. "({best_template:%.1f}): {vs_template.mean:%+.2f} ± {vs_template.half:%.2f} | p = {gain.perm_p:%.2f}; "
     .. "{vs_template.perm_p:%.2f} |"},
}

-- Confirmatory E2's texts in docs/results.md: E1's figures, SQD's iterations, and the
-- comparison on SQD's own next prompts (heldout_train.json).
M.e2_texts = {
  {label = "runs: iterations, G, size, seeds", figure = "runs",
   text = "configurations ({points:%d} iterations of SQD with G = {G:%d} at {size:%d}^3, {opt:%s}, "
     .. "`lr = {base_lr:%s}` and `lr = {learned_lr:%s}`) with seeds 1 to {last_seed:%d}"},
  {label = "runs: seeds of the secondary table", figure = "runs",
   text = "| figure (learned minus base, {seeds:%d} seeds, E2) |"},
  {label = "durations: runs (README.md), comparison (times.txt)", figure = "times",
   text = "EPYC ({runs_min:%d} min for the runs, {heldout_min:%d} min for the comparison)"},
  {label = "primary: overall roofline-score gain, mean ± t half-width", figure = "heldout",
   text = "**Primary metric, the overall held-out roofline-score gain: {overall.roofline.mean:%+.2f} ± "
     .. "{overall.roofline.half:%.2f} points**"},
  {label = "primary: 95% t interval", figure = "heldout",
   text = "(95% t interval [{overall.roofline.lo:%+.2f}, {overall.roofline.hi:%+.2f}])"},
  {label = "primary: per-seed gains", figure = "heldout",
   text = "per seed {overall.roofline.values:%+.2f};"},
  {label = "primary: exact permutation test", figure = "heldout",
   text = "**exact permutation test p = {overall.roofline.perm_p:%.3g}**"},
  {label = "primary: exact sign test", figure = "heldout",
   text = "sign test {overall.roofline.sign_positive:%d} of {overall.roofline.sign_n:%d} positive, "
     .. "p = {overall.roofline.sign_p:%.3g}."},
  {label = "primary: the protocol's verdict (permutation p < 0.05, positive mean)", figure = "heldout",
   text = "**learning is {verdict:%s} for E2**"},
  {label = "primary: base and learned roofline scores, mean of the parts", figure = "heldout",
   text = "the base model's kernels reached {overall.base.roofline:%.1f}% of the machine's FP64 roofline on average "
     .. "over the three parts, the learned policies' {overall.learned.roofline:%.1f}%."},
  {label = "secondary: other size, roofline score", figure = "heldout",
   text = "| held-out, other size ({parts.sizes.size:%d}^3): roofline score | {parts.sizes.roofline.mean:%+.2f} ± "
     .. "{parts.sizes.roofline.half:%.2f} points ({parts.sizes.base.roofline:%.1f}% -> "
     .. "{parts.sizes.learned.roofline:%.1f}%) | permutation p = {parts.sizes.roofline.perm_p:%.2f} |"},
  {label = "secondary: other wordings, roofline score and mean reward", figure = "heldout",
   text = "| held-out, other wordings: roofline score; mean reward | {parts.wordings.roofline.mean:%+.2f} ± "
     .. "{parts.wordings.roofline.half:%.2f} points; {parts.wordings.reward.mean:%+.2f} ± "
     .. "{parts.wordings.reward.half:%.2f} | permutation p = {parts.wordings.roofline.perm_p:%.2f}; "
     .. "{parts.wordings.reward.perm_p:%.3f} |"},
  {label = "secondary: held-out tasks, roofline score", figure = "heldout",
   text = "| held-out, held-out tasks: roofline score | {parts.tasks.roofline.mean:%.0f} ({parts.tasks.writes:%s}) | "
     .. "{parts.tasks.roofline.tests:%s} |"},
  {label = "secondary: verified share, mean of the parts", figure = "heldout",
   text = "| held-out, verified share (mean of the parts) | {overall.ok.mean:%+.1f} ± {overall.ok.half:%.1f} points | "
     .. "permutation p = {overall.ok.perm_p:%.2f} |"},
  {label = "secondary: held-out mean reward", figure = "heldout",
   text = "| held-out, mean reward (Eq. 3) | {overall.reward.mean:%+.2f} ± {overall.reward.half:%.2f} | "
     .. "permutation p = {overall.reward.perm_p:%.2f} |"},
  {label = "secondary: SQD's next prompts, mean reward and roofline score", figure = "heldout_train",
   text = "| SQD's next prompts (`--prompts=train`): mean reward; roofline score | {overall.reward.mean:%+.2f} ± "
     .. "{overall.reward.half:%.2f}; {overall.roofline.mean:%+.2f} ± {overall.roofline.half:%.2f} points | "
     .. "{overall.reward.sign_positive:%d} of {overall.reward.sign_n:%d} positive, p = {overall.reward.sign_p:%.3f}; "
     .. "permutation p = {overall.roofline.perm_p:%.3f} |"},
  {label = "secondary: run's final mean reward, paired by seed", figure = "runs",
   text = "| run's final mean reward (last {final_points:%d} iterations) | "
     .. "{gain.final.mean:%+.2f} ± {gain.final.half:%.2f} "
     .. "({base.final.mean:%.1f} -> {learned.final.mean:%.1f}) | p = {gain.final.perm_p:%.3f} |"},
  {label = "secondary: best kernel, re-measured, paired by seed", figure = "runs",
   text = "| best kernel, re-measured | {gain.best.mean:%+.2f} ± {gain.best.half:%.2f} GFLOPS "
     .. "({base.best.mean:%.1f} -> {learned.best.mean:%.1f}) | p = {gain.best.perm_p:%.2f} |"},
  {label = "control kernel: runs above the bound, largest spread (report.md)", figure = "noise",
   text = "above the {bound:%.0f}% bound in {above:%d} of the {runs:%d} runs (up to {max:%.0f}%)"},
  {label = "secondary: best kernels against each other and the template search, re-measured together",
   figure = "templates",
   text = "| best kernels and the template search, re-measured together | {gain.mean:%+.2f} ± {gain.half:%.2f} "
     .. "GFLOPS ({base.mean:%.1f} -> {learned.mean:%.1f}); learned minus the best template kernel "
     .. "({best_template:%.1f}): {vs_template.mean:%+.2f} ± {vs_template.half:%.2f} | p = {gain.perm_p:%.2f}; "
     .. "{vs_template.perm_p:%.3f} |"},
}

---------------------------------------------------------------------------------------
-- The exploratory sections with raw data
---------------------------------------------------------------------------------------

local NODE = "perf/bench/results/"

-- A claim of a section: raw paths, label, text and compute.
local function claim(section, raw, label, text, compute)
  return {section = section, raw = raw, label = label, text = text, compute = compute}
end

local function model_claims()
  local s = "The model"
  local files = {"models/small/config.json", "models/small/pretrain.json", "models/small/model.safetensors"}
  local function figures(d)
    local c, p = d:json("models/small/config.json"), d:json("models/small/pretrain.json")
    local tasks = require("engine.tasks")
    return {millions = p.figures.parameters / 1e6, hidden = c.hidden_size, layers = c.num_hidden_layers,
            heads = c.num_attention_heads, kv = c.num_key_value_heads, mlp = c.intermediate_size,
            mb = d:size("models/small/model.safetensors") / 1e6,
            examples = thousands(p.settings.examples),
            matmul = 100 * (1 - p.settings.task_share), others = 100 * p.settings.task_share,
            other_tasks = #tasks.list("train") - 1, defects = 100 * p.settings.defect_rate,
            vocab = thousands(c.vocab_size), steps = thousands(p.settings.steps), batch = p.settings.batch,
            seconds = p.figures.seconds, loss = p.figures.final_loss, window = p.figures.loss_window,
            log_loss = d:find(NODE .. "pretrain-default-2026-11-26.log", "exported .* loss=([%d.]+)")}
  end
  return {
    claim(s, files, "architecture and size (config.json, pretrain.json, model.safetensors)",
          "model of {millions:%.1f}M parameters (hidden {hidden:%d}, {layers:%d} layers, {heads:%d} heads with "
            .. "{kv:%d} key/value heads, MLP {mlp:%d}, tied embeddings, {mb:%.1f} MB in bf16)", figures),
    claim(s, files, "corpus (pretrain.json)",
          "on {examples:%s} synthetic examples: {matmul:%.0f}% matmul from `scripts/pretraining/kernelgen.lua`, "
            .. "{others:%.0f}% the suite's {other_tasks:%d} other training tasks", figures),
    claim(s, files, "defect rate (pretrain.json)",
          "{defects:%.0f}% of the matmul kernels carry a deliberate defect", figures),
    claim(s, files, "tokenizer (config.json)", "byte-level BPE tokenizer ({vocab:%s} tokens)", figures),
    claim(s, files, "training (pretrain.json)",
          "Training: {steps:%s} SFT steps of {batch:%d} examples on one H200 (the GPU machine), {seconds:%.0f} s, "
            .. "final loss {loss:%.3f} per token (mean of the last {window:%d} steps)", figures),
    claim(s, {NODE .. "pretrain-default-2026-11-26.log"}, "final loss (the raw log)",
          "final loss {log_loss:%.3f} per token", figures),
  }
end

local function default_model_claims()
  local s = "The default model of 2026-11-26"
  local tasks_file, matmul_file = NODE .. "default-model-tasks-node-2026-11-26.txt",
    NODE .. "default-model-matmul-2core-2026-11-26.txt"
  local function per_task(d)
    local heldout = {}
    for _, t in ipairs(require("engine.tasks").list("heldout")) do heldout[t.name] = true end
    local shares, matmul, held_ok, held_other = {}, nil, 0, 0
    for _, b in ipairs(M.model_checks(d, tasks_file)) do
      if heldout[b.task] then
        held_ok = held_ok + b.verified
        for status, count in pairs(b.statuses) do
          if status ~= "format_violation" then held_other = held_other + count end
        end
      else
        shares[#shares + 1] = percent(b.verified, b.n)
        if b.task == "matmul" then matmul = percent(b.verified, b.n) end
      end
    end
    local lo, hi = range(shares)
    return {lo = lo, hi = hi, matmul = matmul, n = M.model_checks(d, tasks_file)[1].n,
            heldout = held_ok == 0 and "none" or tostring(held_ok),
            format = held_other == 0 and "every sample a format violation"
              or (held_other .. " samples of other statuses")}
  end
  local function matmul_checks(d)
    local blocks = M.model_checks(d, matmul_file)
    if #blocks ~= 2 then error(matmul_file .. ": expected 2 runs (AVX-512, AVX2/FMA), found " .. #blocks, 0) end
    local out = {}
    for i, b in ipairs(blocks) do
      out[i] = {n = b.n, compile = b.compile, verified = b.verified, wider = b.wider, combinations = b.combinations,
                best = b.best, compile_pct = percent(b.compile, b.n), verified_pct = percent(b.verified, b.n)}
    end
    return out
  end
  return {
    claim(s, {tasks_file}, "per task: samples",
          "for every task, {n:%d} samples at temperature 1, seed 1; raw:", per_task),
    claim(s, {tasks_file}, "per task on the GPU node: training tasks' verified share, matmul's, held-out tasks'",
          "{lo:%.0f} to {hi:%.0f}% of each training task's samples verify on the GPU node (policy on its GPU, kernels "
            .. "on 16 cores), {matmul:%.0f}% for matmul, and {heldout:%s} of any held-out task's ({format:%s}:",
          per_task),
    claim(s, {matmul_file}, "2-core model check: compile",
          "| compile | {1.compile:%d} / {1.n:%d} ({1.compile_pct:%.0f}%) | "
            .. "{2.compile:%d} / {2.n:%d} ({2.compile_pct:%.0f}%) |",
          matmul_checks),
    claim(s, {matmul_file}, "2-core model check: verification",
          "| pass verification | {1.verified:%d} / {1.n:%d} ({1.verified_pct:%.0f}%) | {2.verified:%d} / {2.n:%d} "
            .. "({2.verified_pct:%.0f}%) |", matmul_checks),
    claim(s, {matmul_file}, "2-core model check: wider vectors",
          "| kernels with vectors wider than the ISA | {1.wider:%d} | {2.wider:%d} |", matmul_checks),
    claim(s, {matmul_file}, "2-core model check: technique combinations",
          "| technique combinations among the verified kernels | {1.combinations:%d} | {2.combinations:%d} |",
          matmul_checks),
    claim(s, {matmul_file}, "2-core model check: best kernel",
          "| best kernel | {1.best:%.1f} GFLOPS | {2.best:%.1f} GFLOPS |", matmul_checks),
  }
end

-- The GPU node's main job: Experiment 1 (4 seeds) and a short Experiment 2 (3 seeds).
local function node_claims()
  local s = "GPU node main job, 2026-11-26"
  local e1 = NODE .. "node-default-e1-metrics-2026-11-26.jsonl"
  local e1_report = NODE .. "node-default-e1-report-2026-11-26.md"
  local e2 = NODE .. "node-default-e2-metrics-2026-11-26.jsonl"
  local e2_report = NODE .. "node-default-e2-report-2026-11-26.md"
  local failed = {compile_error = true, format_violation = true, library_violation = true}
  local function row(g)
    local function over(fn) return M.group_interval(g, fn).mean end
    return {sample = over(function(r) return M.item_mean(r, function(m) return m.seconds.sample end) end),
            evaluate = over(function(r) return M.item_mean(r, function(m) return m.seconds.evaluate end) end),
            update = over(function(r) return M.item_mean(r, function(m) return m.seconds.update or 0 end) end),
            compiled = over(function(r) return 100 - M.status_share(r, failed) end),
            verified = over(function(r) return M.status_share(r, {ok = true}) end),
            first = over(function(r) return M.reward_window(r, 1, 10) end),
            last = over(function(r) return M.reward_window(r, 21, 30) end),
            best = g.best}
  end
  local function figures(d)
    local r = M.runs_from_records(d, e1)
    local learned_last = map(r.learned.runs, function(run) return M.reward_window(run, 21, 30) end)
    local all_best = {}
    for _, g in ipairs{r.base, r.learned} do for _, run in ipairs(g.runs) do all_best[#all_best + 1] = run.best end end
    local lo, hi = range(learned_last)
    local _, top = range(all_best)
    return {base = row(r.base), learned = row(r.learned), gain = r.gain, steps = r.learned.runs[1].points,
            seeds = #r.learned.runs, learned_last_min = lo, learned_last_max = hi,
            best_low = math.min(r.base.best.mean, r.learned.best.mean), best_top = top,
            yardstick = d:find(e1_report, "blis, ([%d.]+) GFLOPS by its fastest call"),
            cores = d:find(e1_report, "Machine: [^,]+, vector ISA [^,]+, target [^,]+, (%d+) cores"),
            noise = M.report_noise(d, e1_report)}
  end
  local function e2_figures(d)
    local r = M.runs_from_records(d, e2)
    return {gain = r.gain, best = math.max(r.base.best.mean, r.learned.best.mean),
            iterations = r.learned.runs[1].points, seeds = #r.learned.runs}
  end
  local raw = {e1, e1_report}
  return {
    claim(s, {e1}, "steps and seeds", "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then", figures),
    claim(s, {e1_report}, "the node's cores (report)", "on the H200 machine, {cores:%d}-core Sapphire Rapids", figures),
    claim(s, {e1}, "lr = 0 row: seconds, compiled, verified, rewards of steps 1-10 / 21-30, best ± t half-width",
          "| lr = 0 | {base.sample:%.2f} s | {base.evaluate:%.2f} s | - | {base.compiled:%.0f}% | "
            .. "{base.verified:%.0f}% | "
            .. "{base.first:%.1f} / {base.last:%.1f} | {base.best.mean:%.1f} ± {base.best.half:%.1f} |", figures),
    claim(s, {e1}, "lr = 3e-4 row",
          "| lr = 3e-4 | {learned.sample:%.2f} s | {learned.evaluate:%.2f} s | {learned.update:%.2f} s | "
            .. "{learned.compiled:%.0f}% | {learned.verified:%.0f}% | {learned.first:%.1f} / {learned.last:%.1f} | "
            .. "{learned.best.mean:%.1f} ± {learned.best.half:%.1f} |", figures),
    claim(s, {e1}, "reward: learning runs' steps 1-10 and range of steps 21-30, baseline's steps 21-30",
          "reward rose from about {learned.first:%.0f} to {learned_last_min:%.0f}-{learned_last_max:%.0f} "
            .. "in every seed "
            .. "while the baseline's stayed near {base.last:%.0f}:", figures),
    claim(s, {e1}, "reward gain, paired by seed, and the smallest exact p of four seeds",
          "a reward gain of {gain.final.mean:%+.1f} ± {gain.final.half:%.1f} over the four seeds (exploratory: four "
            .. "seeds, whose sign and permutation tests cannot go below p = {gain.final.smallest_p:%.3f})", figures),
    claim(s, {e1}, "best-kernel gain, paired by seed",
          "The best kernel does not differ ({gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS).", figures),
    claim(s, raw, "best kernels: the lower configuration's mean to the best single kernel; the yardstick (report)",
          "The best kernels reach {best_low:%.0f}-{best_top:%.0f} GFLOPS (the lower configuration's mean, the best "
            .. "single kernel), about twice the yardstick (BLIS, the fastest library there, measured at each run's "
            .. "start: {yardstick:%.1f} GFLOPS", figures),
    claim(s, raw, "control kernel's spread (report)",
          "spread on that node was {noise.min:%.1f} to {noise.max:%.1f}% (above the {noise.bound:%.0f}% bound in "
            .. "{noise.above:%d} of {noise.runs:%d} runs:", figures),
    claim(s, {e2}, "Experiment 2: reward gain, best kernels (the higher configuration's mean)",
          "Experiment 2's three iterations (seeds 1-{seeds:%d}): a reward gain of {gain.final.mean:%+.1f} ± "
            .. "{gain.final.half:%.1f}, best kernels about {best:%.0f} GFLOPS", e2_figures),
    {section = s, label = "report's Table II equals the metrics (Experiment 1)", raw = raw,
     agree = function(d) return M.table2_agreement(d, M.runs_from_records(d, e1), e1_report) end},
    {section = s, label = "report's Table II equals the metrics (Experiment 2)", raw = {e2, e2_report},
     agree = function(d) return M.table2_agreement(d, M.runs_from_records(d, e2), e2_report) end},
  }
end

-- Table II at O0, O1 and O3 on the GPU node, with the held-out comparison.
local function olevels_claims()
  local s = "GPU node, O0/O1/O3, 2026-11-26"
  local tsv, report = NODE .. "node-olevels-e1-metrics-2026-11-26.tsv", NODE .. "node-olevels-e1-report-2026-11-26.md"
  local heldout = NODE .. "node-olevels-heldout-2026-11-26.json"
  local raw = {tsv, heldout}
  local function level(d, opt)
    local r = M.runs_from_records(d, tsv, true)
    for _, p in ipairs(r.pairs) do
      if p.learned.config.opt == opt then
        local h = M.heldout(d, heldout).configs[p.learned.name]
        if not h then error(heldout .. ": no held-out comparison for " .. p.learned.name, 0) end
        return {base = p.base, learned = p.learned, gain = p.gain, heldout = h}
      end
    end
    error(tsv .. ": no runs at " .. opt, 0)
  end
  local function levels(d)
    local out = {}
    for _, opt in ipairs{"O0", "O1", "O3"} do out[opt] = level(d, opt) end
    local r = M.runs_from_records(d, tsv, true)
    out.steps, out.seeds = r.pairs[1].learned.runs[1].points, #r.pairs[1].learned.runs
    -- every exact test of the table: reward gains, held-out gains, their "other size" part
    local ps, wmin, wmax = {}, math.huge, -math.huge
    for _, opt in ipairs{"O0", "O1", "O3"} do
      local l = out[opt]
      for _, g in ipairs{l.gain.final, l.heldout.overall.roofline, l.heldout.parts.sizes.roofline} do
        ps[g.perm_p] = true
      end
      wmin = math.min(wmin, l.heldout.parts.wordings.ok_min)
      wmax = math.max(wmax, l.heldout.parts.wordings.ok_max)
    end
    local distinct = {}
    for p in pairs(ps) do distinct[#distinct + 1] = p end
    out.perm_p = #distinct == 1 and string.format("%.2f", distinct[1]) or "not one value"
    out.wordings_min, out.wordings_max = wmin, wmax
    out.size = out.O3.heldout.parts.sizes.size
    out.sizes = {O1 = out.O1.heldout.parts.sizes, O3 = out.O3.heldout.parts.sizes}
    return out
  end
  local claims = {
    claim(s, {tsv}, "steps and seeds",
          "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then `heldout.lua`", levels),
  }
  for _, opt in ipairs{"O0", "O1", "O3"} do
    -- the row's template names the level as L
    local row = ("| L | {L.base.best.mean:%.1f} / {L.learned.best.mean:%.1f} | {L.base.final.mean:%.1f} / "
      .. "{L.learned.final.mean:%.1f} | {L.gain.final.mean:%+.1f} ± {L.gain.final.half:%.1f} | "
      .. "{L.heldout.overall.roofline.values:%+.2f} | {L.heldout.parts.sizes.roofline.values:%+.2f} |")
      :gsub("{L%.", "{" .. opt .. "."):gsub("^| L |", "| " .. opt .. " |")
    claims[#claims + 1] = claim(s, raw, opt .. " row: best kernels, final rewards, reward gain, held-out gains "
                                .. "per seed", row, levels)
  end
  claims[#claims + 1] = claim(s, {heldout}, "other size: roofline score ranges per seed, O3 and O1",
    "on prompts at {size:%d}^3 (the \"other size\" part) the learned policies' kernels reach "
      .. "{sizes.O3.learned.roofline_min:%.0f} to {sizes.O3.learned.roofline_max:%.0f}% of the peak against "
      .. "{sizes.O3.base.roofline_min:%.0f} to {sizes.O3.base.roofline_max:%.0f}% for the base model's at O3, and "
      .. "{sizes.O1.learned.roofline_min:%.0f} to {sizes.O1.learned.roofline_max:%.0f}% against "
      .. "{sizes.O1.base.roofline_min:%.0f} to {sizes.O1.base.roofline_max:%.0f}% at O1.", levels)
  claims[#claims + 1] = claim(s, {heldout}, "other wordings: verified share range, every level, policy and seed",
    "ones verify {wordings_min:%.0f} to {wordings_max:%.0f}% of the kernels they write", levels)
  claims[#claims + 1] = claim(s, raw, "every permutation p of the table",
    "(every permutation p here is {perm_p:%s})", levels)
  claims[#claims + 1] = {
    section = s, label = "the held-out JSON's stored gains equal those recomputed from its kernels", raw = {heldout},
    agree = function(d) return M.heldout_agreement(d, heldout) end}
  claims[#claims + 1] = {section = s, label = "report's Table II equals the metrics", raw = {tsv, report},
    agree = function(d) return M.table2_agreement(d, M.runs_from_records(d, tsv, true), report) end}
  return claims
end

-- Multi-turn refinement against single-turn on the GPU node (experiment3.lua's runs).
local function e3_claims()
  local s = "GPU node, multi-turn, 2026-11-26"
  local dir = NODE .. "node-e3-2026-11-26"
  local function per_turn(run, t, field)
    return mean(map(items(run), function(m)
      if m.turns == 1 then  -- the single-turn control: its one turn is the step
        return field == "verified" and (m.counts.ok or 0) / m.kernels or m.mean_reward
      end
      return m.per_turn[t][field]
    end))
  end
  local function figures(d)
    local r = M.runs_from_dirs(d, dir)
    local single, multi
    for _, g in pairs(r.groups) do
      if g.config.turns == 1 then single = g else multi = g end
    end
    if not (single and multi) then error(dir .. ": needs runs of one turn and of several", 0) end
    local function row(g, turns)
      local out = {reward = M.group_interval(g, function(run) return M.item_mean(run, function(m) return m.mean_reward end) end),
                   best = g.best, kernels = g.runs[1].metrics[1].kernels, seeds = #g.runs, turn = {}}
      for t = 1, turns do
        out.turn[t] = {reward = M.group_interval(g, function(run) return per_turn(run, t, "mean_reward") end),
                       verified = M.group_interval(g, function(run) return 100 * per_turn(run, t, "verified") end)}
      end
      return out
    end
    local turns = multi.config.turns
    local out = {single = row(single, 1), multi = row(multi, turns), turns = turns,
                 steps = #items(multi.runs[1])}
    local function paired(fn)
      local by_seed = {}
      for _, run in ipairs(single.runs) do by_seed[run.seed] = fn(run) end
      return M.over_seeds(map(multi.runs, function(run) return fn(run) - by_seed[run.seed] end))
    end
    out.gain = {reward = paired(function(run) return M.item_mean(run, function(m) return m.mean_reward end) end),
                best = paired(function(run) return run.best end)}
    return out
  end
  local raw = {dir}
  return {
    claim(s, raw, "steps, seeds, kernels a step",
          "{steps:%d} steps of 2 prompts; 24 kernels per prompt in one group for the single-turn control, 8 "
            .. "episodes of three turns for the other, so {multi.kernels:%d} kernels a step in both configurations; "
            .. "`lr = 3e-4`, the paper's reward, raw turn rewards, discount 1, turn-level leave-one-out advantages; "
            .. "seeds 1-{multi.seeds:%d}", figures),
    claim(s, raw, "single-turn row",
          "| single turn (24 kernels per prompt in one group) | {single.reward.mean:%.2f} ± {single.reward.half:%.2f} | "
            .. "{single.best.mean:%.1f} ± {single.best.half:%.1f} | {single.turn.1.verified.mean:%.1f} | - | - |", figures),
    claim(s, raw, "three-turn row",
          "| three turns (8 episodes per prompt) | {multi.reward.mean:%.2f} ± {multi.reward.half:%.2f} | "
            .. "{multi.best.mean:%.1f} ± {multi.best.half:%.1f} | {multi.turn.1.verified.mean:%.1f} | "
            .. "{multi.turn.2.verified.mean:%.1f} | {multi.turn.3.verified.mean:%.1f} |", figures),
    claim(s, raw, "mean reward per turn",
          "the three-turn runs' mean reward is {multi.turn.1.reward.mean:%.1f} at the first turn, "
            .. "{multi.turn.2.reward.mean:%.1f} at the second and {multi.turn.3.reward.mean:%.1f} at the third", figures),
    claim(s, raw, "multi-turn minus single-turn, paired by seed",
          "mean reward {gain.reward.mean:%+.2f} ± {gain.reward.half:%.2f} ({gain.reward.sign_positive:%d} of "
            .. "{gain.reward.n:%d} seeds positive), best kernel {gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS",
          figures),
  }
end

-- The KernelCompare recipe on the GPU node: four policies from two held-out comparisons
-- (base and GRPO only; SFT only and SFT then GRPO), paired by seed.
local function kernelcompare_claims()
  local s = "GPU node, KernelCompare, 2026-11-26"
  local dir = NODE .. "node-kernelcompare-2026-11-26"
  local grpo, sft = dir .. "/heldout_grpo.json", dir .. "/heldout_sft_grpo.json"
  local function figures(d)
    local a, b = M.heldout(d, grpo), M.heldout(d, sft)
    if a.seeds ~= b.seeds then error("the two comparisons hold different seeds", 0) end
    local policies = {base = {a, "base"}, grpo = {a, "learned"}, sft = {b, "base"}, sft_grpo = {b, "learned"}}
    local function values(name, pick)
      local h, who = policies[name][1], policies[name][2]
      return map(h.per_seed, function(x) return pick(x, who) end)
    end
    local function overall(f, scale) return function(x, who) return x.overall[who][f] * (scale or 1) end end
    local function wordings(x, who) return 100 * x.parts.wordings[who].ok end
    local out = {seeds = a.seeds}
    for name in pairs(policies) do
      out[name] = {roofline = stats.interval(values(name, overall("roofline"))),
                   ok = stats.interval(values(name, overall("ok", 100))),
                   wordings_ok = stats.interval(values(name, wordings))}
    end
    local base = values("base", overall("roofline"))
    for _, name in ipairs{"sft", "grpo", "sft_grpo"} do
      local v, diffs = values(name, overall("roofline")), {}
      for i = 1, #v do diffs[i] = v[i] - base[i] end
      out[name].gain = M.over_seeds(diffs)
      out[name].sizes = stats.interval(values(name, function(x, who) return x.parts.sizes[who].roofline end))
    end
    out.base.sizes = stats.interval(values("base", function(x, who) return x.parts.sizes[who].roofline end))
    local pairs_summary = d:json(dir .. "/pairs.json")
    local sft_record = d:json(dir .. "/sft_model/sft.json").figures
    out.pairs = {n = pairs_summary.pairs, kernels = pairs_summary.kernels.generated,
                 verified = pairs_summary.kernels.verified, median = pairs_summary.speedup.median}
    out.sft_record = sft_record
    return out
  end
  local raw = {grpo, sft}
  local function row(label, name)
    return claim(s, raw, label .. " row",
                 "| " .. label .. " | {" .. name .. ".roofline.mean:%.2f} ± {" .. name .. ".roofline.half:%.2f} | {"
                   .. name .. ".ok.mean:%.2f} ± {" .. name .. ".ok.half:%.2f} | {" .. name
                   .. ".wordings_ok.mean:%.2f} ± {" .. name .. ".wordings_ok.half:%.2f} |", figures)
  end
  return {
    claim(s, {dir .. "/pairs.json", dir .. "/sft_model/sft.json"}, "pairs and SFT",
          "{pairs.verified:%d} of kernelgen's matmul kernels measured there (all verified), {pairs.n:%d} pairs of a "
            .. "kernel and one at least 1.2 times faster (median speedup {pairs.median:%.2f})", figures),
    claim(s, {dir .. "/sft_model/sft.json"}, "SFT steps and loss",
          "{sft_record.steps:%d} SFT steps of 16 pairs at `lr = 1e-4` (loss {sft_record.first_loss:%.3f} to "
            .. "{sft_record.last_loss:%.3f})", figures),
    row("base model", "base"), row("SFT only", "sft"), row("GRPO only", "grpo"), row("SFT then GRPO", "sft_grpo"),
    claim(s, raw, "gains over the base model, paired by seed",
          "SFT only {sft.gain.mean:%+.2f} ± {sft.gain.half:%.2f}\npoints, GRPO only {grpo.gain.mean:%+.2f} ± "
            .. "{grpo.gain.half:%.2f}, SFT then GRPO {sft_grpo.gain.mean:%+.2f} ± {sft_grpo.gain.half:%.2f} "
            .. "({sft.gain.sign_positive:%d} of 4, {grpo.gain.sign_positive:%d} of 4 and "
            .. "{sft_grpo.gain.sign_positive:%d} of 4\nseeds positive;", figures),
    claim(s, raw, "other wordings: verified share, base and SFT",
          "the base model verifies {base.wordings_ok.mean:%.0f}% of its kernels for prompts\nworded unlike its "
            .. "training prompts, the SFT model {sft.wordings_ok.mean:%.0f}%", figures),
    claim(s, raw, "other size: roofline score, SFT and base",
          "at the other size it changes nothing ({sft.sizes.mean:%.2f}% against\n{base.sizes.mean:%.2f}% of the "
            .. "roofline)", figures),
    {section = s, label = "heldout_grpo.json's stored gains equal those recomputed from its kernels", raw = {grpo},
     agree = function(d) return M.heldout_agreement(d, grpo) end},
    {section = s, label = "heldout_sft_grpo.json's stored gains equal those recomputed from its kernels", raw = {sft},
     agree = function(d) return M.heldout_agreement(d, sft) end},
  }
end

-- The machine of the page's opening, as the confirmatory data recorded it.
local function machine_claims()
  local s = "Reference machine"
  local file = "docs/data/confirmatory/e1/heldout.json"
  return {
    claim(s, {file}, "measured and nominal FP64 peak, cores, clock (heldout.json)",
          "measures its FP64 peak at {measured_peak_gflops:%.1f} GFLOPS over its {cores:%d} cores, against a nominal "
            .. "{peak_gflops:%.1f} GFLOPS from its {ghz:%.1f} GHz clock", function(d) return d:json(file).machine end),
  }
end

-- Every claim, in the page's order.
function M.claims()
  local all = {}
  local function append(list) for _, c in ipairs(list) do all[#all + 1] = c end end
  append(machine_claims())
  append(M.confirmatory_claims("Confirmatory E1", "docs/data/confirmatory/e1", M.e1_texts))
  append(M.confirmatory_claims("Confirmatory E2", "docs/data/confirmatory/e2", M.e2_texts))
  append(model_claims())
  append(default_model_claims())
  append(node_claims())
  append(olevels_claims())
  append(e3_claims())
  append(kernelcompare_claims())
  return all
end

---------------------------------------------------------------------------------------
-- Entry points
---------------------------------------------------------------------------------------

-- Checks every claim against the page: the lines it prints, and how many are not ok.
-- opts: results (the page's path), data (the raw files' root), claims (default M.claims()).
function M.run(opts)
  local root = (opts.data and opts.data ~= "") and opts.data or default_root()
  local page_path = (opts.results and opts.results ~= "") and opts.results or (root .. "/docs/results.md")
  local f = io.open(page_path, "rb")
  if not f then cli.fail("no page to check at " .. page_path .. " (--results=)") end
  local page = squeeze(f:read("a"))
  f:close()
  local d = M.data(root)
  local lines, failures = {}, 0
  for _, c in ipairs(opts.claims or M.claims()) do
    local status, line = M.check(c, d, page)
    lines[#lines + 1] = line
    if status ~= "ok" then failures = failures + 1 end
  end
  return lines, failures
end

-- out: where the lines go (io.stdout; tests pass a sink).
function M.main(argv, out)
  out = out or io.stdout
  local opts = require("engine.args").parse(argv, M.spec)
  local lines, failures = M.run(opts)
  out:write(table.concat(lines, "\n"), "\n")
  if failures > 0 then
    cli.fail(string.format("%d of %d claims of the page do not match their raw data", failures, #lines))
  end
  out:write(string.format("all %d claims match their raw data\n", #lines))
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
