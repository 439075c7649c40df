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
-- The raw files are read by scripts/lib/claims.lua; here are the page's sections, each a
-- table of its claims' labels and texts and the figures they name.
-- One file over 600 lines: a section's texts and the figures they name are read together.
--
-- To add a section, write its table and append it to M.claims(). A confirmatory
-- experiment's claims come from M.confirmatory_claims(section, dir, texts): the same
-- figures for every experiment, each experiment's own texts.

local claims = require "claims"
local cli = require "cli"
local stats = require "stats"

local M = {}

local mean, range, map = claims.mean, claims.range, claims.map

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
    local path = claims.missing_path(status)
    if path then return "NO RAW DATA", claim_line("NO RAW DATA", claim, path) end
    return "ERROR", claim_line("ERROR", claim, tostring(status))
  end
  return status, claim_line(status, claim, detail)
end

-- A section's claims, in its rows' order. A section is {name, raw = {paths}, figures =
-- fn(data), rows}; a row is {label, text}, with raw or figures of its own where they
-- differ from the section's, or {label, raw = {paths}, agree = fn(data)}.
local function section_claims(section)
  return map(section.rows, function(row)
    return {section = section.name, label = row[1], text = row[2], raw = row.raw or section.raw,
            compute = row.figures or section.figures, agree = row.agree}
  end)
end

-- The figures a confirmatory experiment's texts can name, each from its raw data folder.
-- heldout: heldout.json (claims.heldout's fields); heldout_train: heldout_train.json (the
-- training prompts, E2); runs: runs/ (learned, base, gain, and the runs' settings);
-- times: the durations recorded beside them; noise: report.md's control-kernel table;
-- templates: templates.lua's re-measurement of the runs' best kernels and the search's.
M.confirmatory_figures = {
  heldout = {files = {"heldout.json"}, compute = function(d, dir)
    local h = claims.heldout(d, dir .. "/heldout.json")
    -- the protocol's rule: the primary permutation test below 0.05, with a positive mean
    h.verdict = (h.overall.roofline.perm_p < 0.05 and h.overall.roofline.mean > 0) and "confirmed" or "not confirmed"
    return h
  end},
  heldout_train = {files = {"heldout_train.json"},
                   compute = function(d, dir) return claims.heldout(d, dir .. "/heldout_train.json") end},
  runs = {files = {"runs"}, compute = function(d, dir)
    local r = claims.runs_from_dirs(d, dir .. "/runs")
    if not r.learned then
      error(string.format("%s/runs: expected one learning configuration beside its lr = 0 runs, found %d pairs",
                          dir, #r.pairs), 0)
    end
    local first = r.learned.runs[1]
    local settings = first.identity
    local seeds = r.learned.seeds
    return {learned = r.learned, base = r.base, gain = r.gain, points = first.points, opt = first.config.opt,
            base_lr = claims.short_number(r.base.config.lr), learned_lr = claims.short_number(r.learned.config.lr),
            final_points = math.max(1, first.points // 4), G = settings.G, size = settings.size,
            prompts_per_step = settings.prompts_per_step, seeds = #seeds, last_seed = seeds[#seeds],
            runs = #r.learned.runs + #r.base.runs}
  end},
  times = {files = {"README.md", "times.txt"}, compute = function(d, dir)
    return {runs_min = d:find(dir .. "/README.md", "# (%d+) min %("),
            heldout_min = math.floor(d:find(dir .. "/times.txt", "seconds=(%d+)") / 60 + 0.5)}
  end},
  noise = {files = {"report.md"}, compute = function(d, dir) return claims.report_noise(d, dir .. "/report.md") end},
  templates = {files = {"templates/compare.json"},
               compute = function(d, dir) return claims.templates_compare(d, dir .. "/templates/compare.json") end},
}

-- The claims of a confirmatory experiment: `texts` is a list of {label, figure, text},
-- the figure one of M.confirmatory_figures. Beside them, two agreements: the held-out
-- gains the JSON stored against those recomputed from its kernels, and report.md's
-- Table II against the runs' metrics.
function M.confirmatory_claims(section, dir, texts)
  local rows = {}
  for _, t in ipairs(texts) do
    local figure = M.confirmatory_figures[t.figure]
    if not figure then error(section .. ": no figure '" .. tostring(t.figure) .. "' for " .. t.label, 2) end
    rows[#rows + 1] = {t.label, t.text, raw = map(figure.files, function(f) return dir .. "/" .. f end),
                       figures = function(d) return figure.compute(d, dir) end}
  end
  local heldout, runs, report = dir .. "/heldout.json", dir .. "/runs", dir .. "/report.md"
  rows[#rows + 1] = {"heldout.json's stored gains equal those recomputed from its kernels", raw = {heldout},
                     agree = function(d) return claims.heldout_agreement(d, heldout) end}
  rows[#rows + 1] = {"report.md's Table II equals the runs' metrics", raw = {report, runs},
                     agree = function(d) return claims.table2_agreement(d, claims.runs_from_dirs(d, runs), report) end}
  return section_claims{name = section, rows = rows}
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
-- Confirmatory Table II (protocol version 2): three levels, each a learning
-- configuration and its lr = 0 control, seeds run in two halves on two lent machines
---------------------------------------------------------------------------------------

local T2 = "docs/data/confirmatory/t2"
local T2_HALVES = {{name = "1-5", seeds = {1, 2, 3, 4, 5}}, {name = "6-10", seeds = {6, 7, 8, 9, 10}}}
local T2_HELDOUT = map(T2_HALVES, function(h) return T2 .. "/heldout-" .. h.name .. ".json" end)
local T2_LEVELS = {"O0", "O1", "O3"}
-- The paper's Table II: the final mean reward's gain from learning, in percent, per level.
local PAPER_TABLE2 = {O0 = 125, O1 = 16, O3 = 18}

-- Minutes from the first to the last clock time ("[HH:MM:SS") of a log of one day.
local function log_minutes(d, rel)
  local first, last
  for line in d:text(rel):gmatch("[^\n]+") do
    local h, m, sec = line:match("^%[%a?%d*%s?(%d%d):(%d%d):(%d%d)")
    if h then
      local t = tonumber(h) * 3600 + tonumber(m) * 60 + tonumber(sec)
      first, last = first or t, t
    end
  end
  if not first then error(rel .. ": no clock times", 0) end
  return math.floor((last - first) / 60 + 0.5)
end

local function t2_figures(d)
  local h = claims.heldout(d, T2_HELDOUT)
  local r = claims.runs_from_dirs(d, T2 .. "/runs")
  local levels, ps = {}, {}
  for name, c in pairs(h.configs) do
    local opt = claims.parse_name(name).opt
    levels[opt] = {heldout = c}
    ps[opt] = c.overall.roofline.perm_p
  end
  for _, p in ipairs(r.pairs) do
    local opt = p.learned.config.opt
    local lv = levels[opt]
    if not lv then error(T2 .. ": runs at " .. tostring(opt) .. " have no held-out comparison", 0) end
    lv.runs = p
    lv.final_pct = 100 * p.gain.final.mean / p.base.final.mean
    lv.paper_pct = PAPER_TABLE2[opt]
  end
  local holm = claims.holm(ps, 0.05)
  for _, opt in ipairs(T2_LEVELS) do
    local lv = levels[opt]
    if not (lv and lv.runs) then error(T2 .. ": no runs and comparison at " .. opt, 0) end
    lv.holm = holm[opt]
    lv.verdict = (holm[opt].passes and lv.heldout.overall.roofline.mean > 0) and "confirmed" or "not confirmed"
  end
  local noise = {runs = 0, above = 0, max = 0}
  for _, half in ipairs(T2_HALVES) do
    local n = claims.report_noise(d, T2 .. "/report-" .. half.name .. ".md")
    noise.runs, noise.above, noise.max = noise.runs + n.runs, noise.above + n.above, math.max(noise.max, n.max)
    noise.bound = n.bound
  end
  local first = r.pairs[1].learned.runs[1]
  return {levels = levels, noise = noise, steps = first.points, G = first.identity.G, size = first.identity.size,
          prompts_per_step = first.identity.prompts_per_step, final_points = math.max(1, first.points // 4),
          seeds = #r.pairs[1].learned.runs, other_size = levels.O3.heldout.parts.sizes.size,
          minutes = map(T2_HALVES, function(hf)
            return {runs = log_minutes(d, T2 .. "/runs-" .. hf.name .. ".log"),
                    heldout = log_minutes(d, T2 .. "/heldout-" .. hf.name .. ".txt")}
          end)}
end

-- A level's row of the primary table.
local function t2_primary_row(opt)
  local l = "levels." .. opt .. "."
  local o = l .. "heldout.overall."
  return {"primary at " .. opt .. ": gain, interval, exact tests, Holm, roofline scores, verdict",
          "| " .. opt .. " | {" .. o .. "roofline.mean:%+.2f} ± {" .. o .. "roofline.half:%.2f} | "
            .. "[{" .. o .. "roofline.lo:%+.2f}, {" .. o .. "roofline.hi:%+.2f}] | "
            .. "{" .. o .. "roofline.sign_positive:%d} of {" .. o .. "roofline.sign_n:%d}, "
            .. "p = {" .. o .. "roofline.sign_p:%.3g} | {" .. o .. "roofline.perm_p:%.3g} | "
            .. "{" .. l .. "holm.threshold:%.4f} | {" .. o .. "base.roofline:%.2f}% -> {" .. o .. "learned.roofline:%.2f}% | "
            .. "**{" .. l .. "verdict:%s}** |"}
end

local function t2_seeds_row(opt)
  return {"primary at " .. opt .. ": per-seed gains",
          "| " .. opt .. " | {levels." .. opt .. ".heldout.overall.roofline.values:%+.2f} |"}
end

-- A level's row of the secondary table.
local function t2_secondary_row(opt)
  local l = "levels." .. opt .. "."
  local hp = l .. "heldout.parts."
  local ho = l .. "heldout.overall."
  local g = l .. "runs.gain."
  return {"secondary at " .. opt .. ": parts, verified share, held-out reward, run's reward, best kernel",
          "| " .. opt .. " | {" .. hp .. "sizes.roofline.mean:%+.2f} ± {" .. hp .. "sizes.roofline.half:%.2f} "
            .. "({" .. hp .. "sizes.base.roofline:%.1f}% -> {" .. hp .. "sizes.learned.roofline:%.1f}%) | "
            .. "{" .. hp .. "wordings.roofline.mean:%+.2f} ± {" .. hp .. "wordings.roofline.half:%.2f} | "
            .. "{" .. ho .. "ok.mean:%+.1f} ± {" .. ho .. "ok.half:%.1f} | "
            .. "{" .. ho .. "reward.mean:%+.2f} ± {" .. ho .. "reward.half:%.2f} | "
            .. "{" .. g .. "final.mean:%+.2f} ± {" .. g .. "final.half:%.2f} ({" .. l .. "runs.base.final.mean:%.1f} -> "
            .. "{" .. l .. "runs.learned.final.mean:%.1f}), p = {" .. g .. "final.perm_p:%.3f} | "
            .. "{" .. l .. "final_pct:%+.0f}% ({" .. l .. "paper_pct:%+d}%) | "
            .. "{" .. g .. "best.mean:%+.2f} ± {" .. g .. "best.half:%.2f} ({" .. l .. "runs.base.best.mean:%.1f} -> "
            .. "{" .. l .. "runs.learned.best.mean:%.1f}), p = {" .. g .. "best.perm_p:%.3f} |"}
end

local t2_rows = {
  {"runs: steps, prompts, G, size, seeds",
   "({steps:%d} steps of {prompts_per_step:%d} prompts x G = {G:%d} at {size:%d}^3 on 16 cores"},
  {"durations of the two halves (the logs' clock times)",
   "{minutes.1.runs:%d} and {minutes.2.runs:%d} min for the runs, {minutes.1.heldout:%d} and "
     .. "{minutes.2.heldout:%d} min for the comparisons"},
  {"seeds of the tables", "| level ({seeds:%d} seeds) |"},
  {"other size of the secondary table", "| level | held-out, other size ({other_size:%d}^3): roofline score |"},
  {"final steps of the secondary table", "run's final mean reward (last {final_points:%d} steps) |"},
  {"control kernel: runs above the bound, largest spread (both halves' reports)",
   "above the {noise.bound:%.0f}% bound in {noise.above:%d} of the {noise.runs:%d} runs (up to {noise.max:%.0f}%, each half's"},
}
for _, opt in ipairs(T2_LEVELS) do t2_rows[#t2_rows + 1] = t2_primary_row(opt) end
for _, opt in ipairs(T2_LEVELS) do t2_rows[#t2_rows + 1] = t2_seeds_row(opt) end
for _, opt in ipairs(T2_LEVELS) do t2_rows[#t2_rows + 1] = t2_secondary_row(opt) end
t2_rows[#t2_rows + 1] = {"both held-out JSONs' stored gains equal those recomputed from their kernels", raw = T2_HELDOUT,
                         agree = function(d) return claims.heldout_agreement(d, T2_HELDOUT) end}
for _, half in ipairs(T2_HALVES) do
  local report = T2 .. "/report-" .. half.name .. ".md"
  t2_rows[#t2_rows + 1] = {"report-" .. half.name .. ".md's Table II equals its seeds' metrics", raw = {report, T2 .. "/runs"},
                           agree = function(d)
                             return claims.table2_agreement(d, claims.runs_from_dirs(d, T2 .. "/runs", half.seeds), report)
                           end}
end

local table2 = {
  name = "Confirmatory Table II", figures = t2_figures, rows = t2_rows,
  raw = {T2 .. "/runs", T2_HELDOUT[1], T2_HELDOUT[2], T2 .. "/report-1-5.md", T2 .. "/report-6-10.md",
         T2 .. "/runs-1-5.log", T2 .. "/runs-6-10.log"},
}

---------------------------------------------------------------------------------------
-- Confirmatory E2 on the GPU node (protocol versions 3 and 4): seeds in pieces of at most
-- four, each piece's runs and comparison on one lent machine; ten seeds before the test
---------------------------------------------------------------------------------------

local E2N = "docs/data/confirmatory/e2n"
local E2N_SEEDS = 10
local E2N_PIECES = {{name = "1-4", seeds = {1, 2, 3, 4}}, {name = "5-8", seeds = {5, 6, 7, 8}}}
-- Each seed's first comparison (version 4): seeds 1-3 were compared again with seed 4.
local E2N_HELDOUT = {E2N .. "/heldout-1-3.json", {E2N .. "/heldout-1-4.json", seeds = {4}}, E2N .. "/heldout-5-8.json"}
local E2N_AGAIN = {{E2N .. "/heldout-1-4.json", seeds = {1, 2, 3}}}

local function e2n_figures(d)
  local h = claims.heldout(d, E2N_HELDOUT)
  local first = claims.heldout(d, {{E2N .. "/heldout-1-3.json", seeds = {1, 2, 3}}})
  local again = claims.heldout(d, E2N_AGAIN)
  local moved = {}
  for i, v in ipairs(again.overall.roofline.values) do moved[i] = v - first.overall.roofline.values[i] end
  local r = claims.runs_from_dirs(d, E2N .. "/runs")
  if not r.learned then error(E2N .. "/runs: expected one learning configuration beside its lr = 0 runs", 0) end
  local o = h.overall.roofline
  local negative = 0
  for _, v in ipairs(o.values) do if v < 0 then negative = negative + 1 end end
  local verdict
  if h.seeds < E2N_SEEDS then
    verdict = string.format("no test yet: %d of the protocol's %d seeds", h.seeds, E2N_SEEDS)
  else
    verdict = (o.perm_p < 0.05 and o.mean > 0) and "learning confirmed" or "learning not confirmed"
  end
  local lo, hi = range(map(moved, math.abs))
  return {heldout = h, seeds = h.seeds, negative = negative, verdict = verdict, runs = r,
          again = {values = again.overall.roofline.values, first = first.overall.roofline.values,
                   moved_min = lo, moved_max = hi},
          minutes = map(E2N_PIECES, function(piece)
            return {runs = log_minutes(d, E2N .. "/runs-" .. piece.name .. ".log")}
          end)}
end

local e2n_rows = {
  {"seeds done and the verdict's state", "**{verdict:%s}**"},
  {"durations of the two pieces' runs (the logs' clock times)",
   "{minutes.1.runs:%d} and {minutes.2.runs:%d} min for the runs"},
  {"primary so far: mean ± t half-width, per-seed gains, seeds below zero",
   "overall held-out roofline-score gain over the {seeds:%d} seeds so far: {heldout.overall.roofline.mean:%+.2f} ± "
     .. "{heldout.overall.roofline.half:%.2f} points ({heldout.overall.base.roofline:%.2f}% -> "
     .. "{heldout.overall.learned.roofline:%.2f}%); per seed {heldout.overall.roofline.values:%+.2f}; "
     .. "{negative:%d} of {seeds:%d} below zero"},
  {"parts so far: other size, other wordings",
   "other size ({heldout.parts.sizes.size:%d}^3) {heldout.parts.sizes.roofline.mean:%+.2f} ± "
     .. "{heldout.parts.sizes.roofline.half:%.2f} points, other wordings {heldout.parts.wordings.roofline.mean:%+.2f} ± "
     .. "{heldout.parts.wordings.roofline.half:%.2f}"},
  {"runs so far: final mean reward, best kernel",
   "run's final mean reward (last 3 iterations) {runs.gain.final.mean:%+.2f} ± {runs.gain.final.half:%.2f} "
     .. "({runs.base.final.mean:%.1f} -> {runs.learned.final.mean:%.1f}), best kernel {runs.gain.best.mean:%+.2f} ± "
     .. "{runs.gain.best.half:%.2f} GFLOPS"},
  {"the comparison compared again: seeds 1-3's second gains and how far they moved",
   "seeds 1-3 compared again read {again.values:%+.2f} against {again.first:%+.2f} (moved "
     .. "{again.moved_min:%.2f}-{again.moved_max:%.2f} points)"},
  {"every held-out JSON's stored gains equal those recomputed from its kernels",
   raw = {E2N .. "/heldout-1-3.json", E2N .. "/heldout-1-4.json", E2N .. "/heldout-5-8.json"},
   agree = function(d)
     local got, expected = {}, {}
     for _, f in ipairs{"heldout-1-3.json", "heldout-1-4.json", "heldout-5-8.json"} do
       local a, b = claims.heldout_agreement(d, E2N .. "/" .. f)
       got[#got + 1], expected[#expected + 1] = f .. ": " .. a, f .. ": " .. b
     end
     return table.concat(got, "; "), table.concat(expected, "; ")
   end},
}
for _, piece in ipairs(E2N_PIECES) do
  local report = E2N .. "/report-" .. piece.name .. ".md"
  e2n_rows[#e2n_rows + 1] = {"report-" .. piece.name .. ".md's Table II equals its seeds' metrics", raw = {report, E2N .. "/runs"},
                             agree = function(d)
                               return claims.table2_agreement(d, claims.runs_from_dirs(d, E2N .. "/runs", piece.seeds), report)
                             end}
end

local e2n = {
  name = "Confirmatory E2 on the GPU node", figures = e2n_figures, rows = e2n_rows,
  raw = {E2N .. "/runs", E2N .. "/heldout-1-3.json", E2N .. "/heldout-1-4.json", E2N .. "/heldout-5-8.json",
         E2N .. "/runs-1-4.log", E2N .. "/runs-5-8.log"},
}

---------------------------------------------------------------------------------------
-- The exploratory sections with raw data
---------------------------------------------------------------------------------------

local NODE = "perf/bench/results/"

-- The machine of the page's opening, as the confirmatory data recorded it.
local MACHINE = "docs/data/confirmatory/e1/heldout.json"
local machine = {
  name = "Reference machine", raw = {MACHINE},
  figures = function(d) return d:json(MACHINE).machine end,
  rows = {
    {"measured and nominal FP64 peak, cores, clock (heldout.json)",
     "measures its FP64 peak at {measured_peak_gflops:%.1f} GFLOPS over its {cores:%d} cores, against a nominal "
       .. "{peak_gflops:%.1f} GFLOPS from its {ghz:%.1f} GHz clock"},
  },
}

local PRETRAIN_LOG = NODE .. "pretrain-default-2026-11-26.log"
local model = {
  name = "The model",
  raw = {"models/small/config.json", "models/small/pretrain.json", "models/small/model.safetensors"},
  figures = function(d)
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
            log_loss = d:find(PRETRAIN_LOG, "exported .* loss=([%d.]+)")}
  end,
  rows = {
    {"architecture and size (config.json, pretrain.json, model.safetensors)",
     "model of {millions:%.1f}M parameters (hidden {hidden:%d}, {layers:%d} layers, {heads:%d} heads with "
       .. "{kv:%d} key/value heads, MLP {mlp:%d}, tied embeddings, {mb:%.1f} MB in bf16)"},
    {"corpus (pretrain.json)",
     "on {examples:%s} synthetic examples: {matmul:%.0f}% matmul from `scripts/pretraining/kernelgen.lua`, "
       .. "{others:%.0f}% the suite's {other_tasks:%d} other training tasks"},
    {"defect rate (pretrain.json)", "{defects:%.0f}% of the matmul kernels carry a deliberate defect"},
    {"tokenizer (config.json)", "byte-level BPE tokenizer ({vocab:%s} tokens)"},
    {"training (pretrain.json)",
     "Training: {steps:%s} SFT steps of {batch:%d} examples on one H200 (the GPU machine), {seconds:%.0f} s, "
       .. "final loss {loss:%.3f} per token (mean of the last {window:%d} steps)"},
    {"final loss (the raw log)", "final loss {log_loss:%.3f} per token", raw = {PRETRAIN_LOG}},
  },
}

local DEFAULT_TASKS = NODE .. "default-model-tasks-node-2026-11-26.txt"
local DEFAULT_MATMUL = NODE .. "default-model-matmul-2core-2026-11-26.txt"

-- Per task on the GPU node: the training tasks' verified shares, matmul's, and what the
-- held-out tasks' samples were.
local function default_per_task(d)
  local heldout = {}
  for _, t in ipairs(require("engine.tasks").list("heldout")) do heldout[t.name] = true end
  local shares, matmul, held_ok, held_other = {}, nil, 0, 0
  for _, b in ipairs(claims.model_checks(d, DEFAULT_TASKS)) do
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
  return {lo = lo, hi = hi, matmul = matmul, n = claims.model_checks(d, DEFAULT_TASKS)[1].n,
          heldout = held_ok == 0 and "none" or tostring(held_ok),
          format = held_other == 0 and "every sample a format violation"
            or (held_other .. " samples of other statuses")}
end

-- The 2-core matmul check, once per ISA (AVX-512, then AVX2/FMA).
local function default_matmul_checks(d)
  local blocks = claims.model_checks(d, DEFAULT_MATMUL)
  if #blocks ~= 2 then error(DEFAULT_MATMUL .. ": expected 2 runs (AVX-512, AVX2/FMA), found " .. #blocks, 0) end
  local out = {}
  for i, b in ipairs(blocks) do
    out[i] = {n = b.n, compile = b.compile, verified = b.verified, wider = b.wider, combinations = b.combinations,
              best = b.best, compile_pct = percent(b.compile, b.n), verified_pct = percent(b.verified, b.n)}
  end
  return out
end

local default_model = {
  name = "The default model of 2026-11-26", raw = {DEFAULT_MATMUL}, figures = default_matmul_checks,
  rows = {
    {"per task: samples", "for every task, {n:%d} samples at temperature 1, seed 1; raw:",
     raw = {DEFAULT_TASKS}, figures = default_per_task},
    {"per task on the GPU node: training tasks' verified share, matmul's, held-out tasks'",
     "{lo:%.0f} to {hi:%.0f}% of each training task's samples verify on the GPU node (policy on its GPU, kernels "
       .. "on 16 cores), {matmul:%.0f}% for matmul, and {heldout:%s} of any held-out task's ({format:%s}:",
     raw = {DEFAULT_TASKS}, figures = default_per_task},
    {"2-core model check: compile",
     "| compile | {1.compile:%d} / {1.n:%d} ({1.compile_pct:%.0f}%) | "
       .. "{2.compile:%d} / {2.n:%d} ({2.compile_pct:%.0f}%) |"},
    {"2-core model check: verification",
     "| pass verification | {1.verified:%d} / {1.n:%d} ({1.verified_pct:%.0f}%) | {2.verified:%d} / {2.n:%d} "
       .. "({2.verified_pct:%.0f}%) |"},
    {"2-core model check: wider vectors", "| kernels with vectors wider than the ISA | {1.wider:%d} | {2.wider:%d} |"},
    {"2-core model check: technique combinations",
     "| technique combinations among the verified kernels | {1.combinations:%d} | {2.combinations:%d} |"},
    {"2-core model check: best kernel", "| best kernel | {1.best:%.1f} GFLOPS | {2.best:%.1f} GFLOPS |"},
  },
}

-- The GPU node's main job: Experiment 1 (4 seeds) and a short Experiment 2 (3 seeds).
local NODE_E1 = NODE .. "node-default-e1-metrics-2026-11-26.jsonl"
local NODE_E1_REPORT = NODE .. "node-default-e1-report-2026-11-26.md"
local NODE_E2 = NODE .. "node-default-e2-metrics-2026-11-26.jsonl"
local NODE_E2_REPORT = NODE .. "node-default-e2-report-2026-11-26.md"

-- A configuration's row of the main job's table: seconds per phase, compiled and
-- verified shares, rewards of steps 1-10 and 21-30, means over its seeds.
local function node_row(g)
  local failed = {compile_error = true, format_violation = true, library_violation = true}
  local function over(fn) return claims.group_interval(g, fn).mean end
  return {sample = over(function(r) return claims.item_mean(r, function(m) return m.seconds.sample end) end),
          evaluate = over(function(r) return claims.item_mean(r, function(m) return m.seconds.evaluate end) end),
          update = over(function(r) return claims.item_mean(r, function(m) return m.seconds.update or 0 end) end),
          compiled = over(function(r) return 100 - claims.status_share(r, failed) end),
          verified = over(function(r) return claims.status_share(r, {ok = true}) end),
          first = over(function(r) return claims.reward_window(r, 1, 10) end),
          last = over(function(r) return claims.reward_window(r, 21, 30) end),
          best = g.best}
end

local function node_e1_figures(d)
  local r = claims.runs_from_records(d, NODE_E1)
  local learned_last = map(r.learned.runs, function(run) return claims.reward_window(run, 21, 30) end)
  local all_best = {}
  for _, g in ipairs{r.base, r.learned} do for _, run in ipairs(g.runs) do all_best[#all_best + 1] = run.best end end
  local lo, hi = range(learned_last)
  local _, top = range(all_best)
  return {base = node_row(r.base), learned = node_row(r.learned), gain = r.gain, steps = r.learned.runs[1].points,
          seeds = #r.learned.runs, learned_last_min = lo, learned_last_max = hi,
          best_low = math.min(r.base.best.mean, r.learned.best.mean), best_top = top,
          yardstick = d:find(NODE_E1_REPORT, "blis, ([%d.]+) GFLOPS by its fastest call"),
          cores = d:find(NODE_E1_REPORT, "Machine: [^,]+, vector ISA [^,]+, target [^,]+, (%d+) cores"),
          noise = claims.report_noise(d, NODE_E1_REPORT)}
end

local function node_e2_figures(d)
  local r = claims.runs_from_records(d, NODE_E2)
  return {gain = r.gain, best = math.max(r.base.best.mean, r.learned.best.mean),
          iterations = r.learned.runs[1].points, seeds = #r.learned.runs}
end

local node = {
  name = "GPU node main job, 2026-11-26", raw = {NODE_E1}, figures = node_e1_figures,
  rows = {
    {"steps and seeds", "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then"},
    {"the node's cores (report)", "on the H200 machine, {cores:%d}-core Sapphire Rapids", raw = {NODE_E1_REPORT}},
    {"lr = 0 row: seconds, compiled, verified, rewards of steps 1-10 / 21-30, best ± t half-width",
     "| lr = 0 | {base.sample:%.2f} s | {base.evaluate:%.2f} s | - | {base.compiled:%.0f}% | "
       .. "{base.verified:%.0f}% | "
       .. "{base.first:%.1f} / {base.last:%.1f} | {base.best.mean:%.1f} ± {base.best.half:%.1f} |"},
    {"lr = 3e-4 row",
     "| lr = 3e-4 | {learned.sample:%.2f} s | {learned.evaluate:%.2f} s | {learned.update:%.2f} s | "
       .. "{learned.compiled:%.0f}% | {learned.verified:%.0f}% | {learned.first:%.1f} / {learned.last:%.1f} | "
       .. "{learned.best.mean:%.1f} ± {learned.best.half:%.1f} |"},
    {"reward: learning runs' steps 1-10 and range of steps 21-30, baseline's steps 21-30",
     "reward rose from about {learned.first:%.0f} to {learned_last_min:%.0f}-{learned_last_max:%.0f} "
       .. "in every seed "
       .. "while the baseline's stayed near {base.last:%.0f}:"},
    {"reward gain, paired by seed, and the smallest exact p of four seeds",
     "a reward gain of {gain.final.mean:%+.1f} ± {gain.final.half:%.1f} over the four seeds (exploratory: four "
       .. "seeds, whose sign and permutation tests cannot go below p = {gain.final.smallest_p:%.3f})"},
    {"best-kernel gain, paired by seed",
     "The best kernel does not differ ({gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS)."},
    {"best kernels: the lower configuration's mean to the best single kernel; the yardstick (report)",
     "The best kernels reach {best_low:%.0f}-{best_top:%.0f} GFLOPS (the lower configuration's mean, the best "
       .. "single kernel), about twice the yardstick (BLIS, the fastest library there, measured at each run's "
       .. "start: {yardstick:%.1f} GFLOPS", raw = {NODE_E1, NODE_E1_REPORT}},
    {"control kernel's spread (report)",
     "spread on that node was {noise.min:%.1f} to {noise.max:%.1f}% (above the {noise.bound:%.0f}% bound in "
       .. "{noise.above:%d} of {noise.runs:%d} runs:", raw = {NODE_E1, NODE_E1_REPORT}},
    {"Experiment 2: reward gain, best kernels (the higher configuration's mean)",
     "Experiment 2's three iterations (seeds 1-{seeds:%d}): a reward gain of {gain.final.mean:%+.1f} ± "
       .. "{gain.final.half:%.1f}, best kernels about {best:%.0f} GFLOPS", raw = {NODE_E2}, figures = node_e2_figures},
    {"report's Table II equals the metrics (Experiment 1)", raw = {NODE_E1, NODE_E1_REPORT},
     agree = function(d) return claims.table2_agreement(d, claims.runs_from_records(d, NODE_E1), NODE_E1_REPORT) end},
    {"report's Table II equals the metrics (Experiment 2)", raw = {NODE_E2, NODE_E2_REPORT},
     agree = function(d) return claims.table2_agreement(d, claims.runs_from_records(d, NODE_E2), NODE_E2_REPORT) end},
  },
}

-- Table II at O0, O1 and O3 on the GPU node, with the held-out comparison.
local OLEVELS = NODE .. "node-olevels-e1-metrics-2026-11-26.tsv"
local OLEVELS_REPORT = NODE .. "node-olevels-e1-report-2026-11-26.md"
local OLEVELS_HELDOUT = NODE .. "node-olevels-heldout-2026-11-26.json"

-- One level's runs (base, learned, their gain) and its held-out comparison.
local function olevels_level(d, opt)
  local r = claims.runs_from_records(d, OLEVELS, true)
  for _, p in ipairs(r.pairs) do
    if p.learned.config.opt == opt then
      local h = claims.heldout(d, OLEVELS_HELDOUT).configs[p.learned.name]
      if not h then error(OLEVELS_HELDOUT .. ": no held-out comparison for " .. p.learned.name, 0) end
      return {base = p.base, learned = p.learned, gain = p.gain, heldout = h}
    end
  end
  error(OLEVELS .. ": no runs at " .. opt, 0)
end

local function olevels_figures(d)
  local out = {}
  for _, opt in ipairs{"O0", "O1", "O3"} do out[opt] = olevels_level(d, opt) end
  local r = claims.runs_from_records(d, OLEVELS, true)
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

-- A level's row of the table: the template names the level as L.
local function olevels_row(opt)
  local row = ("| L | {L.base.best.mean:%.1f} / {L.learned.best.mean:%.1f} | {L.base.final.mean:%.1f} / "
    .. "{L.learned.final.mean:%.1f} | {L.gain.final.mean:%+.1f} ± {L.gain.final.half:%.1f} | "
    .. "{L.heldout.overall.roofline.values:%+.2f} | {L.heldout.parts.sizes.roofline.values:%+.2f} |")
    :gsub("{L%.", "{" .. opt .. "."):gsub("^| L |", "| " .. opt .. " |")
  return {opt .. " row: best kernels, final rewards, reward gain, held-out gains per seed", row}
end

local olevels = {
  name = "GPU node, O0/O1/O3, 2026-11-26", raw = {OLEVELS, OLEVELS_HELDOUT}, figures = olevels_figures,
  rows = {
    {"steps and seeds", "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then `heldout.lua`",
     raw = {OLEVELS}},
    olevels_row("O0"), olevels_row("O1"), olevels_row("O3"),
    {"other size: roofline score ranges per seed, O3 and O1",
     "on prompts at {size:%d}^3 (the \"other size\" part) the learned policies' kernels reach "
       .. "{sizes.O3.learned.roofline_min:%.0f} to {sizes.O3.learned.roofline_max:%.0f}% of the peak against "
       .. "{sizes.O3.base.roofline_min:%.0f} to {sizes.O3.base.roofline_max:%.0f}% for the base model's at O3, and "
       .. "{sizes.O1.learned.roofline_min:%.0f} to {sizes.O1.learned.roofline_max:%.0f}% against "
       .. "{sizes.O1.base.roofline_min:%.0f} to {sizes.O1.base.roofline_max:%.0f}% at O1.", raw = {OLEVELS_HELDOUT}},
    {"other wordings: verified share range, every level, policy and seed",
     "ones verify {wordings_min:%.0f} to {wordings_max:%.0f}% of the kernels they write", raw = {OLEVELS_HELDOUT}},
    {"every permutation p of the table", "(every permutation p here is {perm_p:%s})"},
    {"the held-out JSON's stored gains equal those recomputed from its kernels", raw = {OLEVELS_HELDOUT},
     agree = function(d) return claims.heldout_agreement(d, OLEVELS_HELDOUT) end},
    {"report's Table II equals the metrics", raw = {OLEVELS, OLEVELS_REPORT},
     agree = function(d)
       return claims.table2_agreement(d, claims.runs_from_records(d, OLEVELS, true), OLEVELS_REPORT)
     end},
  },
}

-- Multi-turn refinement against single-turn on the GPU node (experiment3.lua's runs).
local E3 = NODE .. "node-e3-2026-11-26"

-- A run's mean over its steps of one turn's figure (mean_reward, or verified: a share).
local function e3_per_turn(run, t, field)
  return mean(map(claims.items(run), function(m)
    if m.turns == 1 then  -- the single-turn control: its one turn is the step
      return field == "verified" and (m.counts.ok or 0) / m.kernels or m.mean_reward
    end
    return m.per_turn[t][field]
  end))
end

-- A run's mean reward over its steps, every turn together.
local function e3_reward(run) return claims.item_mean(run, function(m) return m.mean_reward end) end

local function e3_figures(d)
  local r = claims.runs_from_dirs(d, E3)
  local single, multi
  for _, g in pairs(r.groups) do
    if g.config.turns == 1 then single = g else multi = g end
  end
  if not (single and multi) then error(E3 .. ": needs runs of one turn and of several", 0) end
  local function row(g, turns)
    local out = {reward = claims.group_interval(g, e3_reward), best = g.best,
                 kernels = g.runs[1].metrics[1].kernels, seeds = #g.runs, turn = {}}
    for t = 1, turns do
      local function reward(run) return e3_per_turn(run, t, "mean_reward") end
      local function verified(run) return 100 * e3_per_turn(run, t, "verified") end
      out.turn[t] = {reward = claims.group_interval(g, reward), verified = claims.group_interval(g, verified)}
    end
    return out
  end
  local turns = multi.config.turns
  local out = {single = row(single, 1), multi = row(multi, turns), turns = turns,
               steps = #claims.items(multi.runs[1])}
  local function paired(fn)
    local by_seed = {}
    for _, run in ipairs(single.runs) do by_seed[run.seed] = fn(run) end
    return claims.over_seeds(map(multi.runs, function(run) return fn(run) - by_seed[run.seed] end))
  end
  out.gain = {reward = paired(e3_reward), best = paired(function(run) return run.best end)}
  return out
end

local e3 = {
  name = "GPU node, multi-turn, 2026-11-26", raw = {E3}, figures = e3_figures,
  rows = {
    {"steps, seeds, kernels a step",
     "{steps:%d} steps of 2 prompts; 24 kernels per prompt in one group for the single-turn control, 8 "
       .. "episodes of three turns for the other, so {multi.kernels:%d} kernels a step in both configurations; "
       .. "`lr = 3e-4`, the paper's reward, raw turn rewards, discount 1, turn-level leave-one-out advantages; "
       .. "seeds 1-{multi.seeds:%d}"},
    {"single-turn row",
     "| single turn (24 kernels per prompt in one group) | {single.reward.mean:%.2f} ± {single.reward.half:%.2f} | "
       .. "{single.best.mean:%.1f} ± {single.best.half:%.1f} | {single.turn.1.verified.mean:%.1f} | - | - |"},
    {"three-turn row",
     "| three turns (8 episodes per prompt) | {multi.reward.mean:%.2f} ± {multi.reward.half:%.2f} | "
       .. "{multi.best.mean:%.1f} ± {multi.best.half:%.1f} | {multi.turn.1.verified.mean:%.1f} | "
       .. "{multi.turn.2.verified.mean:%.1f} | {multi.turn.3.verified.mean:%.1f} |"},
    {"mean reward per turn",
     "the three-turn runs' mean reward is {multi.turn.1.reward.mean:%.1f} at the first turn, "
       .. "{multi.turn.2.reward.mean:%.1f} at the second and {multi.turn.3.reward.mean:%.1f} at the third"},
    {"multi-turn minus single-turn, paired by seed",
     "mean reward {gain.reward.mean:%+.2f} ± {gain.reward.half:%.2f} ({gain.reward.sign_positive:%d} of "
       .. "{gain.reward.n:%d} seeds positive), best kernel {gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS"},
  },
}

-- The KernelCompare recipe on the GPU node: four policies from two held-out comparisons
-- (base and GRPO only; SFT only and SFT then GRPO), paired by seed.
local KC = NODE .. "node-kernelcompare-2026-11-26"
local KC_GRPO, KC_SFT = KC .. "/heldout_grpo.json", KC .. "/heldout_sft_grpo.json"

local function kernelcompare_figures(d)
  local a, b = claims.heldout(d, KC_GRPO), claims.heldout(d, KC_SFT)
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
    out[name].gain = claims.over_seeds(diffs)
    out[name].sizes = stats.interval(values(name, function(x, who) return x.parts.sizes[who].roofline end))
  end
  out.base.sizes = stats.interval(values("base", function(x, who) return x.parts.sizes[who].roofline end))
  local pairs_summary = d:json(KC .. "/pairs.json")
  local sft_record = d:json(KC .. "/sft_model/sft.json").figures
  out.pairs = {n = pairs_summary.pairs, kernels = pairs_summary.kernels.generated,
               verified = pairs_summary.kernels.verified, median = pairs_summary.speedup.median}
  out.sft_record = sft_record
  return out
end

-- A policy's row of the table: roofline score, verified share, and that share for the
-- other wordings.
local function kernelcompare_row(label, name)
  return {label .. " row",
          "| " .. label .. " | {" .. name .. ".roofline.mean:%.2f} ± {" .. name .. ".roofline.half:%.2f} | {"
            .. name .. ".ok.mean:%.2f} ± {" .. name .. ".ok.half:%.2f} | {" .. name
            .. ".wordings_ok.mean:%.2f} ± {" .. name .. ".wordings_ok.half:%.2f} |"}
end

local kernelcompare = {
  name = "GPU node, KernelCompare, 2026-11-26", raw = {KC_GRPO, KC_SFT}, figures = kernelcompare_figures,
  rows = {
    {"pairs and SFT",
     "{pairs.verified:%d} of kernelgen's matmul kernels measured there (all verified), {pairs.n:%d} pairs of a "
       .. "kernel and one at least 1.2 times faster (median speedup {pairs.median:%.2f})",
     raw = {KC .. "/pairs.json", KC .. "/sft_model/sft.json"}},
    {"SFT steps and loss",
     "{sft_record.steps:%d} SFT steps of 16 pairs at `lr = 1e-4` (loss {sft_record.first_loss:%.3f} to "
       .. "{sft_record.last_loss:%.3f})", raw = {KC .. "/sft_model/sft.json"}},
    kernelcompare_row("base model", "base"), kernelcompare_row("SFT only", "sft"),
    kernelcompare_row("GRPO only", "grpo"), kernelcompare_row("SFT then GRPO", "sft_grpo"),
    {"gains over the base model, paired by seed",
     "SFT only {sft.gain.mean:%+.2f} ± {sft.gain.half:%.2f}\npoints, GRPO only {grpo.gain.mean:%+.2f} ± "
       .. "{grpo.gain.half:%.2f}, SFT then GRPO {sft_grpo.gain.mean:%+.2f} ± {sft_grpo.gain.half:%.2f} "
       .. "({sft.gain.sign_positive:%d} of 4, {grpo.gain.sign_positive:%d} of 4 and "
       .. "{sft_grpo.gain.sign_positive:%d} of 4\nseeds positive;"},
    {"other wordings: verified share, base and SFT",
     "the base model verifies {base.wordings_ok.mean:%.0f}% of its kernels for prompts\nworded unlike its "
       .. "training prompts, the SFT model {sft.wordings_ok.mean:%.0f}%"},
    {"other size: roofline score, SFT and base",
     "at the other size it changes nothing ({sft.sizes.mean:%.2f}% against\n{base.sizes.mean:%.2f}% of the "
       .. "roofline)"},
    {"heldout_grpo.json's stored gains equal those recomputed from its kernels", raw = {KC_GRPO},
     agree = function(d) return claims.heldout_agreement(d, KC_GRPO) end},
    {"heldout_sft_grpo.json's stored gains equal those recomputed from its kernels", raw = {KC_SFT},
     agree = function(d) return claims.heldout_agreement(d, KC_SFT) end},
  },
}

-- Every claim, in the page's order.
function M.claims()
  local all = {}
  local function append(list) for _, c in ipairs(list) do all[#all + 1] = c end end
  append(section_claims(machine))
  append(M.confirmatory_claims("Confirmatory E1", "docs/data/confirmatory/e1", M.e1_texts))
  append(M.confirmatory_claims("Confirmatory E2", "docs/data/confirmatory/e2", M.e2_texts))
  append(section_claims(table2))
  append(section_claims(e2n))
  for _, section in ipairs{model, default_model, node, olevels, e3, kernelcompare} do
    append(section_claims(section))
  end
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
  local d = claims.data(root)
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
