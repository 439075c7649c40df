-- Experiment 3's figures and tables: episodes of several turns against the single-turn
-- control, which evaluates as many kernels a step (experiment3.lua). Each step's record
-- holds per_turn figures; the comparisons are paired by seed, as seed_results.lua's gains
-- over lr = 0 are. Reads results.load's entries; the tables are markdown, as results.lua's.
--
--   local turn_results = require "report.turn_results"
--   local exp = require("report.results").load("runs/experiment3")
--   turn_results.turns_table(exp), turn_results.per_turn_table(exp)  -- nil unless experiment 3
--   turn_results.turns_text(exp)          -- the paired differences in words, or nil

local results = require "report.results"
local seed_results = require "report.seed_results"

local turn_results = {}

local md_row, md_head, seeds_text = results.md_row, results.md_head, seed_results.seeds_text

-- One run's figures over its steps: the mean reward of all its kernels, its best kernel,
-- the kernels of a step, and per turn the mean reward and the share that verified.
function turn_results.turn_run_figures(cfg)
  local kernels, sum, per, per_step = 0, 0, {}, nil
  for _, m in ipairs(cfg.metrics) do
    if m.kind == "step" and m.per_turn then
      per_step = per_step or m.kernels
      kernels, sum = kernels + m.kernels, sum + m.mean_reward * m.kernels
      for t, f in ipairs(m.per_turn) do
        local p = per[t] or {n = 0, reward = 0, ok = 0}
        per[t] = p
        p.n, p.reward, p.ok = p.n + f.kernels, p.reward + f.mean_reward * f.kernels, p.ok + f.verified * f.kernels
      end
    end
  end
  local turns = {}
  for t, p in ipairs(per) do
    turns[t] = {kernels = p.n, reward = p.n > 0 and p.reward / p.n or nil, verified = p.n > 0 and p.ok / p.n or nil}
  end
  return {kernels = kernels, per_step = per_step, mean = kernels > 0 and sum / kernels or nil,
          best = cfg.best and cfg.best.gflops, turns = turns,
          first = turns[1] and turns[1].reward, last = #turns > 0 and turns[#turns].reward or nil}
end

-- The single-turn group (turns = 1) with the same other swept values as `group`, if any.
function turn_results.control_group(exp, group)
  if (group.config.turns or 1) == 1 then return nil end
  for _, other in ipairs(seed_results.groups(exp)) do
    if other.config.turns == 1 then
      local same = true
      for k, v in pairs(group.config) do if k ~= "turns" and other.config[k] ~= v then same = false end end
      for k in pairs(other.config) do if group.config[k] == nil then same = false end end
      if same then return other end
    end
  end
  return nil
end

-- A figure of a group's runs by seed: {[seed] = fn(turn_run_figures)}.
local function turn_values(group, fn)
  local values = {}
  for _, cfg in ipairs(group.runs) do
    values[seed_results.seed_of(cfg)] = fn(turn_results.turn_run_figures(cfg))
  end
  return values
end

-- Per seed, a minus b, over the seeds both have.
local function seed_differences(a, b)
  local d = {}
  for seed, v in pairs(a) do if b[seed] then d[seed] = v - b[seed] end end
  return d
end

-- A group's experiment 3 figures: by seed and as intervals, the mean reward, the best
-- kernel, turn 1's and the last turn's mean rewards and their paired difference, and
-- against its control the paired differences of the mean reward and the best kernel.
function turn_results.turn_group_figures(exp, group)
  local f = {values = {}, iv = {}, control = turn_results.control_group(exp, group)}
  for _, field in ipairs{"mean", "best", "first", "last"} do
    f.values[field] = turn_values(group, function(r) return r[field] end)
  end
  f.values.gain_in_episode = seed_differences(f.values.last, f.values.first)
  if f.control then
    f.values.vs_mean = seed_differences(f.values.mean, turn_values(f.control, function(r) return r.mean end))
    f.values.vs_best = seed_differences(f.values.best, turn_values(f.control, function(r) return r.best end))
  end
  for field, values in pairs(f.values) do f.iv[field] = seed_results.interval(values) end
  f.per_step = turn_results.turn_run_figures(group.runs[1]).per_step
  return f
end

-- Table: per configuration, its turns, the kernels of a step, the mean reward of all its
-- kernels and its best kernel (mean ± half-width over seeds), and the paired differences
-- from its single-turn control. Nil when no run is experiment 3's.
function turn_results.turns_table(exp)
  if exp.kind ~= "experiment3" then return nil end
  local rows = md_head{{"configuration", "---"}, {"turns", "---:"}, {"kernels a step", "---:"},
                       {"mean reward", "---:"}, {"best GFLOPS", "---:"}, {"mean reward - single-turn", "---:"},
                       {"best GFLOPS - single-turn", "---:"}, {"seeds", "---:"}}
  for _, g in ipairs(seed_results.groups(exp)) do
    local f = turn_results.turn_group_figures(exp, g)
    local vs_mean, vs_best = "-", "-"
    if f.control then
      vs_mean, vs_best = seed_results.pm(f.iv.vs_mean, "%+.2f"), seed_results.pm(f.iv.vs_best, "%+.2f")
    elseif g.config.turns == 1 then
      vs_mean, vs_best = "(control)", "(control)"
    end
    rows[#rows + 1] = md_row{g.name, tostring(g.config.turns or 1), tostring(f.per_step or "-"),
                             seed_results.pm(f.iv.mean), seed_results.pm(f.iv.best), vs_mean, vs_best,
                             seeds_text(g)}
  end
  return table.concat(rows, "\n") .. "\n"
end

-- Table: per configuration and turn, the kernels, the mean reward and the share that
-- verified (mean ± half-width over seeds). Nil when no run is experiment 3's.
function turn_results.per_turn_table(exp)
  if exp.kind ~= "experiment3" then return nil end
  local rows = md_head{{"configuration", "---"}, {"turn", "---:"}, {"kernels", "---:"}, {"mean reward", "---:"},
                       {"verified (%)", "---:"}, {"seeds", "---:"}}
  for _, g in ipairs(seed_results.groups(exp)) do
    local figures = {}
    for i, cfg in ipairs(g.runs) do figures[i] = turn_results.turn_run_figures(cfg) end
    for t = 1, #figures[1].turns do
      local rewards, verified, kernels = {}, {}, 0
      for i, r in ipairs(figures) do
        local turn = r.turns[t]
        if turn then
          rewards[i], verified[i] = turn.reward, turn.verified and 100 * turn.verified
          kernels = kernels + turn.kernels
        end
      end
      rows[#rows + 1] = md_row{g.name, tostring(t), tostring(kernels),
                               seed_results.pm(seed_results.interval(rewards)),
                               seed_results.pm(seed_results.interval(verified), "%.1f"), seeds_text(g)}
    end
  end
  return table.concat(rows, "\n") .. "\n"
end

-- For each multi-turn configuration: its last turn against its first (paired within each
-- seed's run), and its mean reward and best kernel against the single-turn control's
-- (paired by seed), each with the interval of the differences, whether it excludes 0, and
-- the exact tests. Markdown lines, or nil when there is nothing to compare.
function turn_results.turns_text(exp)
  if exp.kind ~= "experiment3" then return nil end
  local lines = {}
  local function said(iv, values, better, worse, same)
    return seed_results.verdict(iv, better, worse, same) .. " (" .. seed_results.exact_tests_text(values)
      .. ")"
  end
  for _, g in ipairs(seed_results.groups(exp)) do
    if (g.config.turns or 1) > 1 then
      local f = turn_results.turn_group_figures(exp, g)
      local line = string.format("- `%s`: last turn - turn 1 mean reward %s, %s", g.name,
                                 seed_results.pm(f.iv.gain_in_episode, "%+.2f"),
                                 said(f.iv.gain_in_episode, f.values.gain_in_episode, "later turns earn more",
                                      "later turns earn less", "no change across turns shown"))
      if f.control then
        line = line .. string.format("; against `%s` (%d paired seeds): mean reward %s, %s; best GFLOPS %s, %s",
                                     f.control.name, f.iv.vs_mean.n, seed_results.pm(f.iv.vs_mean, "%+.2f"),
                                     said(f.iv.vs_mean, f.values.vs_mean, "multi-turn is higher",
                                          "multi-turn is lower", "not distinguishable from single-turn"),
                                     seed_results.pm(f.iv.vs_best, "%+.2f"),
                                     said(f.iv.vs_best, f.values.vs_best, "multi-turn is higher",
                                          "multi-turn is lower", "not distinguishable from single-turn"))
      end
      lines[#lines + 1] = line .. "."
    end
  end
  if #lines == 0 then return nil end
  return table.concat(lines, "\n") .. "\n"
end

return turn_results
