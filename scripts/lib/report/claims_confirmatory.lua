-- The claims of docs/results.md's confirmatory sections (docs/protocol.md's experiments),
-- each figure recomputed from its raw data folder under data/confirmatory/. A claim
-- and a section are as recompute.lua says; M.claims() lists them in the page's order.
--
-- A confirmatory experiment of one learning configuration (E1, E2 on two cores) names
-- the same figures (M.figures) in texts of its own (M.e1_texts, M.e2_texts); Table II
-- and E2 on the GPU node, run in pieces on lent machines, have sections of their own.

local claims = require "report.claims"

local M = {}

local map, range = claims.map, claims.range

-- The figures a confirmatory experiment's texts can name, each from its raw data folder.
-- heldout: heldout.json (claims.heldout's fields); heldout_train: heldout_train.json (the
-- training prompts, E2); runs: runs/ (learned, base, gain, and the runs' settings);
-- times: the durations recorded beside them; noise: report.md's control-kernel table;
-- templates: templates.lua's re-measurement of the runs' best kernels and the search's.
M.figures = {
  heldout = {files = {"heldout.json"}, compute = function(d, dir)
    local h = claims.heldout(d, dir .. "/heldout.json")
    -- the protocol's rule: the primary permutation test below 0.05, with a positive mean
    h.verdict = (h.overall.roofline.perm_p < 0.05 and h.overall.roofline.mean > 0) and "confirmed" or "not confirmed"
    return h
  end},
  -- version 5: each part its own measure; the primary is the sizes part's permutation test
  heldout_v5 = {files = {"heldout.json", "audit.json"}, compute = function(d, dir)
    local h = claims.heldout(d, dir .. "/heldout.json")
    local sizes = h.parts.sizes.roofline
    h.verdict = (sizes.perm_p < 0.05 and sizes.mean > 0) and "confirmed" or "not confirmed"
    h.audit = d:json(dir .. "/audit.json").status
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
-- the figure one of M.figures. Beside them, two agreements: the held-out
-- gains the JSON stored against those recomputed from its kernels, and report.md's
-- Table II against the runs' metrics.
function M.experiment(section, dir, texts)
  local rows = {}
  for _, t in ipairs(texts) do
    local figure = M.figures[t.figure]
    if not figure then error(section .. ": no figure '" .. tostring(t.figure) .. "' for " .. t.label, 2) end
    rows[#rows + 1] = {t.label, t.text, raw = map(figure.files, function(f) return dir .. "/" .. f end),
                       figures = function(d) return figure.compute(d, dir) end}
  end
  local heldout, runs, report = dir .. "/heldout.json", dir .. "/runs", dir .. "/report.md"
  rows[#rows + 1] = {"heldout.json's stored gains equal those recomputed from its kernels", raw = {heldout},
                     agree = function(d) return claims.heldout_agreement(d, heldout) end}
  rows[#rows + 1] = {"report.md's Table II equals the runs' metrics", raw = {report, runs},
                     agree = function(d) return claims.table2_agreement(d, claims.runs_from_dirs(d, runs), report) end}
  return claims.section_claims{name = section, rows = rows}
end

-- Rows the experiments' sections share, word for word.
local RUNS_ROW = {label = "runs: steps, prompts, G, size, seeds", figure = "runs",
  text = "configurations ({points:%d} steps of {prompts_per_step:%d} prompts x G = {G:%d} at {size:%d}^3, {opt:%s}, "
    .. "`lr = {base_lr:%s}` and `lr = {learned_lr:%s}`) with seeds 1 to {last_seed:%d}"}

local BEST_ROW = {label = "secondary: best kernel, re-measured, paired by seed", figure = "runs",
  text = "| best kernel, re-measured | {gain.best.mean:%+.2f} ± {gain.best.half:%.2f} GFLOPS "
    .. "({base.best.mean:%.1f} -> {learned.best.mean:%.1f}) | p = {gain.best.perm_p:%.2f} |"}

-- The run's own final mean reward, over its last quarter of `unit` (steps, iterations).
local function final_row(unit)
  return {label = "secondary: run's final mean reward, paired by seed", figure = "runs",
          text = "| run's final mean reward (last {final_points:%d} " .. unit .. ") | "
            .. "{gain.final.mean:%+.2f} ± {gain.final.half:%.2f} "
            .. "({base.final.mean:%.1f} -> {learned.final.mean:%.1f}) | p = {gain.final.perm_p:%.3f} |"}
end

-- Rows E1 and E2 both state, their words differing only in the test or the edges given.
local function other_size_row(test)
  return {label = "secondary: other size, roofline score", figure = "heldout",
          text = "| held-out, other size ({parts.sizes.size:%d}^3): roofline score | {parts.sizes.roofline.mean:%+.2f} ± "
            .. "{parts.sizes.roofline.half:%.2f} points ({parts.sizes.base.roofline:%.1f}% -> "
            .. "{parts.sizes.learned.roofline:%.1f}%) | " .. test .. " |"}
end

local function reward_row(test)
  return {label = "secondary: held-out mean reward", figure = "heldout",
          text = "| held-out, mean reward (Eq. 3) | {overall.reward.mean:%+.2f} ± {overall.reward.half:%.2f} | "
            .. test .. " |"}
end

local function noise_row(before, after)
  return {label = "control kernel: runs above the bound, largest spread (report.md)", figure = "noise",
          text = before .. "the {bound:%.0f}% bound in {above:%d} of the {runs:%d} runs (up to {max:%.0f}%" .. after}
end

-- `p_format`: the precision of the test against the best template kernel.
local function templates_row(p_format)
  return {label = "secondary: best kernels against each other and the template search, re-measured together",
          figure = "templates",
          text = "| best kernels and the template search, re-measured together | {gain.mean:%+.2f} ± {gain.half:%.2f} "
            .. "GFLOPS ({base.mean:%.1f} -> {learned.mean:%.1f}); learned minus the best template kernel "
            .. "({best_template:%.1f}): {vs_template.mean:%+.2f} ± {vs_template.half:%.2f} | p = {gain.perm_p:%.2f}; "
            .. "{vs_template.perm_p:" .. p_format .. "} |"}
end

-- The rows E1 and E2 state alike: the held-out comparison's primary metric and the
-- secondary rows whose words the two sections share (each text is found in its own
-- section, so one text serves both).
local function heldout_rows(experiment)
  return {
    {label = "runs: seeds of the secondary table", figure = "runs",
     text = "| figure (learned minus base, {seeds:%d} seeds"},
    {label = "durations: runs (README.md), comparison (times.txt)", figure = "times",
     text = "EPYC ({runs_min:%d} min for the runs, {heldout_min:%d} min for the comparison"},
    {label = "primary: overall roofline-score gain, mean ± t half-width", figure = "heldout",
     text = "**Primary metric, the overall held-out roofline-score gain: {overall.roofline.mean:%+.2f} ± "
       .. "{overall.roofline.half:%.2f} points**"},
    {label = "primary: 95% t interval", figure = "heldout",
     text = "(95% t interval [{overall.roofline.lo:%+.2f}, {overall.roofline.hi:%+.2f}])"},
    {label = "primary: exact permutation test", figure = "heldout",
     text = "**exact permutation test p = {overall.roofline.perm_p:%.3g}**"},
    {label = "primary: the protocol's verdict (permutation p < 0.05, positive mean)", figure = "heldout",
     text = "**learning is {verdict:%s} for " .. experiment .. "**"},
    {label = "primary: base and learned roofline scores, mean of the parts", figure = "heldout",
     text = "kernels reached {overall.base.roofline:%.1f}% of the machine's FP64 roofline on average over the three "
       .. "parts, the learned policies' {overall.learned.roofline:%.1f}%."},
    {label = "secondary: held-out tasks, roofline score", figure = "heldout",
     text = "| held-out, held-out tasks: roofline score | {parts.tasks.roofline.mean:%.0f} ({parts.tasks.writes:%s}) | "
       .. "{parts.tasks.roofline.tests:%s} |"},
    {label = "secondary: verified share, mean of the parts", figure = "heldout",
     text = "| held-out, verified share (mean of the parts) | {overall.ok.mean:%+.1f} ± {overall.ok.half:%.1f} points | "
       .. "permutation p = {overall.ok.perm_p:%.2f} |"},
  }
end

-- A list of rows and lists of rows, flat.
local function rows(...)
  local out = {}
  for _, item in ipairs({...}) do
    if item.label then out[#out + 1] = item else for _, r in ipairs(item) do out[#out + 1] = r end end
  end
  return out
end

-- Confirmatory E1's texts in docs/results.md.
M.e1_texts = rows(
  RUNS_ROW,
  heldout_rows("E1"),
  {label = "runs: steps of what it says", figure = "runs", text = "What it says: {points:%d} steps of GRPO"},
  {label = "primary: per-seed gains", figure = "heldout",
   text = "every seed gained ({overall.roofline.values:%+.2f});"},
  {label = "primary: the permutation test's smallest p", figure = "heldout",
   text = "({overall.roofline.perm_rank:%s} with ten seeds)"},
  {label = "primary: exact sign test", figure = "heldout",
   text = "sign test {overall.roofline.sign_positive:%d} of {overall.roofline.sign_n:%d}, "
     .. "p = {overall.roofline.sign_p:%.3g}."},
  other_size_row("{parts.sizes.roofline.sign_positive:%d} of {parts.sizes.roofline.sign_n:%d} positive, "
                 .. "p = {parts.sizes.roofline.sign_p:%.3f}"),
  {label = "secondary: other wordings, roofline score", figure = "heldout",
   text = "| held-out, other wordings: roofline score | {parts.wordings.roofline.mean:%+.2f} ± "
     .. "{parts.wordings.roofline.half:%.2f} points | permutation p = {parts.wordings.roofline.perm_p:%.2f} |"},
  reward_row("p = {overall.reward.perm_p:%.3f}"),
  final_row("steps"),
  BEST_ROW,
  {label = "other wordings: verified share, range over policies and seeds", figure = "heldout",
   text = "verify {parts.wordings.ok_min:%.0f} to {parts.wordings.ok_max:%.0f}% of their kernels"},
  noise_row("", ","),
  templates_row("%.2f")
)

-- Confirmatory E1 of protocol version 5 (every held-out part unseen): each part's own
-- test, the sizes part primary, the parts with kernels averaged as a secondary figure.
local function part_row(part, title)
  local f = "parts." .. part .. "."
  return {label = "v5: " .. part .. " part, roofline score, its own exact test", figure = "heldout_v5",
          text = "| " .. title .. " | {" .. f .. "roofline.mean:%+.2f} ± {" .. f .. "roofline.half:%.2f} points ({"
            .. f .. "base.roofline:%.1f}% -> {" .. f .. "learned.roofline:%.1f}%) | {" .. f
            .. "roofline.sign_positive:%d} of {" .. f .. "roofline.sign_n:%d} positive; permutation p = {" .. f
            .. "roofline.perm_p:%.3g} | {" .. f .. "writes:%s} |"}
end

M.e1v5_texts = {
  RUNS_ROW,
  {label = "audit of the model (audit.json)", figure = "heldout_v5", text = "the audit found its corpus {audit:%s}"},
  {label = "durations: runs (README.md), comparison (times.txt)", figure = "times",
   text = "({runs_min:%d} min for the runs, {heldout_min:%d} min for the comparison)"},
  {label = "primary: sizes part, mean ± t half-width and interval", figure = "heldout_v5",
   text = "**Primary metric, the sizes part's roofline-score gain ({parts.sizes.size:%d}^3): "
     .. "{parts.sizes.roofline.mean:%+.2f} ± {parts.sizes.roofline.half:%.2f} points** (95% t interval "
     .. "[{parts.sizes.roofline.lo:%+.2f}, {parts.sizes.roofline.hi:%+.2f}]; per seed {parts.sizes.roofline.values:%+.2f})"},
  {label = "primary: exact permutation and sign tests", figure = "heldout_v5",
   text = "**exact permutation test p = {parts.sizes.roofline.perm_p:%.3g}**, sign test "
     .. "{parts.sizes.roofline.sign_positive:%d} of {parts.sizes.roofline.sign_n:%d}, p = {parts.sizes.roofline.sign_p:%.3g}"},
  {label = "primary: the protocol's verdict (sizes part: permutation p < 0.05, positive mean)", figure = "heldout_v5",
   text = "**learning is {verdict:%s} for E1 on unseen prompts (version 5)**"},
  part_row("sizes", "sizes (primary)"),
  part_row("wordings", "wordings"),
  part_row("tasks", "tasks"),
  {label = "v5: parts with and without kernels", figure = "heldout_v5",
   text = "parts with a verified kernel: {written_parts:%s}; without (no test, out of every mean): {unwritten_parts:%s}"},
  {label = "v5: overall of the parts with kernels (secondary)", figure = "heldout_v5",
   text = "| overall, mean of the parts with kernels: roofline score | {with_kernels.roofline.mean:%+.2f} ± "
     .. "{with_kernels.roofline.half:%.2f} points | permutation p = {with_kernels.roofline.perm_p:%.3g} |"},
  {label = "v5: verified share, parts with kernels", figure = "heldout_v5",
   text = "| verified share, parts with kernels | {with_kernels.ok.mean:%+.1f} ± {with_kernels.ok.half:%.1f} points | "
     .. "permutation p = {with_kernels.ok.perm_p:%.2f} |"},
  {label = "v5: mean reward, parts with kernels", figure = "heldout_v5",
   text = "| mean reward (Eq. 3), parts with kernels | {with_kernels.reward.mean:%+.2f} ± {with_kernels.reward.half:%.2f} | "
     .. "permutation p = {with_kernels.reward.perm_p:%.3f} |"},
  final_row("steps"),
  BEST_ROW,
}

-- Confirmatory E2's texts in docs/results.md: E1's figures, SQD's iterations, and the
-- comparison on SQD's own next prompts (heldout_train.json).
M.e2_texts = rows(
  {label = "runs: iterations, G, size, seeds", figure = "runs",
   text = "configurations ({points:%d} iterations of SQD with G = {G:%d} at {size:%d}^3, {opt:%s}, "
     .. "`lr = {base_lr:%s}` and `lr = {learned_lr:%s}`) with seeds 1 to {last_seed:%d}"},
  heldout_rows("E2"),
  {label = "primary: per-seed gains", figure = "heldout",
   text = "per seed {overall.roofline.values:%+.2f};"},
  {label = "primary: exact sign test", figure = "heldout",
   text = "sign test {overall.roofline.sign_positive:%d} of {overall.roofline.sign_n:%d} positive, "
     .. "p = {overall.roofline.sign_p:%.3g}."},
  other_size_row("permutation p = {parts.sizes.roofline.perm_p:%.2f}"),
  {label = "secondary: other wordings, roofline score and mean reward", figure = "heldout",
   text = "| held-out, other wordings: roofline score; mean reward | {parts.wordings.roofline.mean:%+.2f} ± "
     .. "{parts.wordings.roofline.half:%.2f} points; {parts.wordings.reward.mean:%+.2f} ± "
     .. "{parts.wordings.reward.half:%.2f} | permutation p = {parts.wordings.roofline.perm_p:%.2f}; "
     .. "{parts.wordings.reward.perm_p:%.3f} |"},
  reward_row("permutation p = {overall.reward.perm_p:%.2f}"),
  {label = "secondary: SQD's next prompts, mean reward and roofline score", figure = "heldout_train",
   text = "| SQD's next prompts (`--prompts=train`): mean reward; roofline score | {overall.reward.mean:%+.2f} ± "
     .. "{overall.reward.half:%.2f}; {overall.roofline.mean:%+.2f} ± {overall.roofline.half:%.2f} points | "
     .. "{overall.reward.sign_positive:%d} of {overall.reward.sign_n:%d} positive, p = {overall.reward.sign_p:%.3f}; "
     .. "permutation p = {overall.roofline.perm_p:%.3f} |"},
  final_row("iterations"),
  BEST_ROW,
  noise_row("above ", ")"),
  templates_row("%.3f")
)
---------------------------------------------------------------------------------------
-- Confirmatory Table II (protocol version 2): three levels, each a learning
-- configuration and its lr = 0 control, seeds run in two halves on two lent machines
---------------------------------------------------------------------------------------

local T2 = "data/confirmatory/t2"
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

-- Appends to `rows` the agreement of each piece of seeds run on its own ({name = "1-5",
-- seeds = {...}}): its report-NAME.md's Table II against its seeds' runs under dir/runs.
local function add_report_rows(rows, dir, pieces)
  for _, piece in ipairs(pieces) do
    local report = dir .. "/report-" .. piece.name .. ".md"
    rows[#rows + 1] = {"report-" .. piece.name .. ".md's Table II equals its seeds' metrics", raw = {report, dir .. "/runs"},
                       agree = function(d)
                         return claims.table2_agreement(d, claims.runs_from_dirs(d, dir .. "/runs", piece.seeds), report)
                       end}
  end
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
add_report_rows(t2_rows, T2, T2_HALVES)

local table2 = {
  name = "Confirmatory Table II", figures = t2_figures, rows = t2_rows,
  raw = {T2 .. "/runs", T2_HELDOUT[1], T2_HELDOUT[2], T2 .. "/report-1-5.md", T2 .. "/report-6-10.md",
         T2 .. "/runs-1-5.log", T2 .. "/runs-6-10.log"},
}

---------------------------------------------------------------------------------------
-- Confirmatory E2 on the GPU node (protocol versions 3 and 4): seeds in pieces of at most
-- four, each piece's runs and comparison on one lent machine; ten seeds before the test
---------------------------------------------------------------------------------------

local E2N = "data/confirmatory/e2n"
local E2N_SEEDS = 10
local E2N_PIECES = {{name = "1-4", seeds = {1, 2, 3, 4}}, {name = "5-8", seeds = {5, 6, 7, 8}},
                    {name = "9-10", seeds = {9, 10}}}
-- Each seed's first comparison (version 4): seeds 1-3 were compared again with seed 4.
local E2N_HELDOUT = {E2N .. "/heldout-1-3.json", {E2N .. "/heldout-1-4.json", seeds = {4}}, E2N .. "/heldout-5-8.json",
                     E2N .. "/heldout-9-10.json"}
local E2N_FILES = {"heldout-1-3.json", "heldout-1-4.json", "heldout-5-8.json", "heldout-9-10.json"}
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
  {"the verdict", "**{verdict:%s}**"},
  {"durations of the three pieces' runs (the logs' clock times)",
   "{minutes.1.runs:%d}, {minutes.2.runs:%d} and {minutes.3.runs:%d} min for the runs"},
  {"primary: mean ± t half-width, interval, exact tests, roofline scores",
   "overall held-out roofline-score gain over the {seeds:%d} seeds: {heldout.overall.roofline.mean:%+.2f} ± "
     .. "{heldout.overall.roofline.half:%.2f} points (95% interval [{heldout.overall.roofline.lo:%+.2f}, "
     .. "{heldout.overall.roofline.hi:%+.2f}]; {heldout.overall.base.roofline:%.2f}% -> "
     .. "{heldout.overall.learned.roofline:%.2f}%), exact permutation p = {heldout.overall.roofline.perm_p:%.3g}, "
     .. "sign test {heldout.overall.roofline.sign_positive:%d} of {heldout.overall.roofline.sign_n:%d} positive, "
     .. "p = {heldout.overall.roofline.sign_p:%.3g}"},
  {"primary: per-seed gains, seeds below zero",
   "per seed {heldout.overall.roofline.values:%+.2f}; {negative:%d} of {seeds:%d} below zero"},
  {"secondary: held-out verified share and reward",
   "verified share {heldout.overall.ok.mean:%+.1f} ± {heldout.overall.ok.half:%.1f} points, mean reward "
     .. "{heldout.overall.reward.mean:%+.2f} ± {heldout.overall.reward.half:%.2f}"},
  {"parts: other size, other wordings",
   "other size ({heldout.parts.sizes.size:%d}^3) {heldout.parts.sizes.roofline.mean:%+.2f} ± "
     .. "{heldout.parts.sizes.roofline.half:%.2f} points, other wordings {heldout.parts.wordings.roofline.mean:%+.2f} ± "
     .. "{heldout.parts.wordings.roofline.half:%.2f}"},
  {"runs: final mean reward, best kernel, with their exact tests",
   "run's final mean reward (last 3 iterations) {runs.gain.final.mean:%+.2f} ± {runs.gain.final.half:%.2f} "
     .. "({runs.base.final.mean:%.1f} -> {runs.learned.final.mean:%.1f}, permutation p = {runs.gain.final.perm_p:%.3g}), "
     .. "best kernel {runs.gain.best.mean:%+.2f} ± {runs.gain.best.half:%.2f} GFLOPS (permutation p = "
     .. "{runs.gain.best.perm_p:%.3g})"},
  {"the comparison compared again: seeds 1-3's second gains and how far they moved",
   "seeds 1-3 compared again read {again.values:%+.2f} against {again.first:%+.2f} (moved "
     .. "{again.moved_min:%.2f}-{again.moved_max:%.2f} points)"},
  {"every held-out JSON's stored gains equal those recomputed from its kernels",
   raw = map(E2N_FILES, function(f) return E2N .. "/" .. f end),
   agree = function(d)
     local got, expected = {}, {}
     for _, f in ipairs(E2N_FILES) do
       local a, b = claims.heldout_agreement(d, E2N .. "/" .. f)
       got[#got + 1], expected[#expected + 1] = f .. ": " .. a, f .. ": " .. b
     end
     return table.concat(got, "; "), table.concat(expected, "; ")
   end},
}
add_report_rows(e2n_rows, E2N, E2N_PIECES)

local e2n = {
  name = "Confirmatory E2 on the GPU node", figures = e2n_figures, rows = e2n_rows,
  raw = {E2N .. "/runs", E2N .. "/heldout-1-3.json", E2N .. "/heldout-1-4.json", E2N .. "/heldout-5-8.json",
         E2N .. "/heldout-9-10.json", E2N .. "/runs-1-4.log", E2N .. "/runs-5-8.log", E2N .. "/runs-9-10.log"},
}

-- Every confirmatory claim, in the page's order.
function M.claims()
  local all = {}
  local function append(list) for _, c in ipairs(list) do all[#all + 1] = c end end
  append(M.experiment("Confirmatory E1", "data/confirmatory/e1", M.e1_texts))
  append(M.experiment("Confirmatory E1, version 5", "data/confirmatory/e1v5", M.e1v5_texts))
  append(M.experiment("Confirmatory E2", "data/confirmatory/e2", M.e2_texts))
  append(claims.section_claims(table2))
  append(claims.section_claims(e2n))
  return all
end

return M
