-- Staged Quality-Diversity (Fig. 1 of the paper): the selection arithmetic and the pool
-- bookkeeping. `experiment2.lua` runs the loop; this module decides what it expands.
--
-- A node is an evaluated kernel: {id =, stage =, status =, gflops =, code =, message =}.
-- Each stage has a pool of nodes. Every iteration selects, from every stage's pool,
--   * the top 40% of the successful kernels by GFLOPS  -> "deepen" into the next stage,
--   * the next 30% of them                             -> "improve" at the same stage,
--   * 30% of the erroneous kernels, at random          -> "repair" at the same stage,
-- and always the seed code ("improve" at stage 1). Each selected node is expanded into G
-- children (one prompt, one group, one GRPO update), and the children are filed into
-- the next iteration's pools by the stage they were asked for.
--
--   local sqd = require "method.sqd"
--   local plan = sqd.plan(pools, seed_node, {rng = sqd.rng(7)})
--   local pools = sqd.file(children, {pool_size = 10, rng = sqd.rng(8)})

local rngs = require "engine.rng"
local feedback = require "method.feedback"
local prompts = require "method.prompts"
local stages = require "method.stages"

local sqd = {}

-- The paper's fractions.
sqd.fractions = {top = 0.4, middle = 0.3, repair = 0.3}

-- How many of n a fraction takes: rounded up, so one success is still deepened.
function sqd.share(fraction, n)
  return math.min(n, math.ceil(fraction * n - 1e-9))
end

-- A small deterministic generator (engine.rng's xorshift64*), so a resumed run makes the
-- same random choices. rng(n) returns an integer in 1..n.
sqd.rng = rngs.xorshift

-- A seeded random subset of k items (order of the input kept).
local function sample(list, k, rng)
  local idx = {}
  for i = 1, #list do idx[i] = i end
  for i = #idx, 2, -1 do
    local j = rng(i)
    idx[i], idx[j] = idx[j], idx[i]
  end
  local chosen = {}
  for i = 1, k do chosen[i] = idx[i] end
  table.sort(chosen)
  local out = {}
  for i, j in ipairs(chosen) do out[i] = list[j] end
  return out
end

local function by_performance(a, b)
  if a.gflops ~= b.gflops then return a.gflops > b.gflops end
  return a.id < b.id
end

-- Splits a pool into successes (best first) and errors (in id order).
function sqd.split(pool)
  local ok, bad = {}, {}
  for _, node in ipairs(pool) do
    if node.status == "ok" then ok[#ok + 1] = node else bad[#bad + 1] = node end
  end
  table.sort(ok, by_performance)
  table.sort(bad, function(a, b) return a.id < b.id end)
  return ok, bad
end

-- The selection from one stage's pool: a list of {node =, action =, stage =} where
-- stage is the stage the children are asked for. opts.stages: the task's stage ladder
-- (stages.for_task; default Table I), here and in plan and file.
function sqd.select(pool, s, opts)
  opts = opts or {}
  local f = opts.fractions or sqd.fractions
  local rng = opts.rng or sqd.rng(1)
  local ok, bad = sqd.split(pool)
  local n_top = sqd.share(f.top, #ok)
  local n_mid = math.min(sqd.share(f.middle, #ok), #ok - n_top)
  local n_rep = sqd.share(f.repair, #bad)
  local out = {}
  for i = 1, n_top do
    if s < (opts.stages or stages).count then
      out[#out + 1] = {node = ok[i], action = "deepen", stage = s + 1}
    else  -- nothing deeper than the last stage: improve there
      out[#out + 1] = {node = ok[i], action = "improve", stage = s}
    end
  end
  for i = n_top + 1, n_top + n_mid do
    out[#out + 1] = {node = ok[i], action = "improve", stage = s}
  end
  for _, node in ipairs(sample(bad, n_rep, rng)) do
    out[#out + 1] = {node = node, action = "repair", stage = s}
  end
  return out
end

-- The whole iteration's plan: the selection of every stage, then the seed.
-- pools[s] is the list of nodes at stage s (missing or empty for none).
function sqd.plan(pools, seed, opts)
  local plan = {}
  for s = 1, (opts and opts.stages or stages).count do
    for _, pick in ipairs(sqd.select(pools[s] or {}, s, opts)) do plan[#plan + 1] = pick end
  end
  if seed then plan[#plan + 1] = {node = seed, action = "improve", stage = 1, seed = true} end
  return plan
end

-- Files children (nodes with a stage) into the next iteration's pools, one per stage.
-- opts.pool_size > 0 bounds each pool: it keeps the best successes and a random share
-- of the errors, in proportion to their numbers (successes rounded up). Without a bound
-- the work grows about 0.7 x G times per iteration.
function sqd.file(children, opts)
  opts = opts or {}
  local rng = opts.rng or sqd.rng(1)
  local ladder = opts.stages or stages
  local by_stage = {}
  for s = 1, ladder.count do by_stage[s] = {} end
  for _, child in ipairs(children) do
    local list = by_stage[child.stage]
    if not list then error("sqd.file: child " .. tostring(child.id) .. " has no valid stage", 2) end
    list[#list + 1] = child
  end
  local size = opts.pool_size or 0
  if size <= 0 then return by_stage end
  local pools = {}
  for s = 1, ladder.count do
    local list = by_stage[s]
    if #list <= size then
      pools[s] = list
    else
      local ok, bad = sqd.split(list)
      local k_ok = math.min(#ok, math.ceil(size * #ok / #list))
      local k_bad = math.min(#bad, size - k_ok)
      local pool = {}
      for i = 1, k_ok do pool[#pool + 1] = ok[i] end
      for _, node in ipairs(sample(bad, k_bad, rng)) do pool[#pool + 1] = node end
      pools[s] = pool
    end
  end
  return pools
end

-- What a repair prompt says of the kernel's failure: feedback.text, the engine's words
-- (a script may set its own function of the pool node).
sqd.feedback = function(node) return feedback.text(node) end

-- The prompt messages for a selection (see prompts.lua).
function sqd.prompt(pick, task)
  local node = pick.node
  if pick.action == "deepen" then return prompts.advance(node.code, pick.stage - 1, task) end
  if pick.action == "repair" then return prompts.repair(node.code, pick.stage, sqd.feedback(node), task) end
  if pick.action == "improve" then return prompts.improve(node.code, pick.stage, task) end
  error("sqd.prompt: unknown action '" .. tostring(pick.action) .. "'", 2)
end

-- Pools as plain data for the run store: {{ids at stage 1}, ..., {ids at stage 6}}.
function sqd.pool_ids(pools, ladder)
  local out = {}
  for s = 1, (ladder or stages).count do
    local ids = {}
    for i, node in ipairs(pools[s] or {}) do ids[i] = node.id end
    out[s] = ids
  end
  return out
end

-- A node from a stored sample.
function sqd.node(sample)
  return {id = sample.id, stage = sample.stage, status = sample.status, gflops = sample.gflops,
          code = sample.code, message = sample.extra and sample.extra.message or nil}
end

-- The pools a run stored (sqd.pool_ids under "pool") as nodes again, and its seed code's
-- node (the sample under "seed_id"): what the next iteration's plan selects from. A
-- mixture keeps one of each per task, under other keys ("pool/axpy", "seed_id/axpy").
function sqd.load_pools(run, pool_key, seed_key)
  local pools = {}
  for s, ids in ipairs(run:get(pool_key or "pool", {})) do
    pools[s] = {}
    for i, id in ipairs(ids) do pools[s][i] = sqd.node(run:sample(id)) end
  end
  return pools, sqd.node(run:sample(run:get(seed_key or "seed_id")))
end

return sqd
