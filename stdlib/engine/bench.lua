-- engine.bench (the global `bench`): the evaluation's primitives of engine.bench_core
-- (engine/host/mod_bench.cpp), with a task of the suite resolved here, once per call:
-- {task = NAME, size = ...} (or problem = {task =, size =, seed =}) becomes the problem
-- engine.tasks.resolve gives, its spec resolved for the size, which C++ checks once. The
-- suite itself: bench.tasks([filter]) and bench.task(name), as engine.tasks reads it.
local core = require "engine.bench_core"
local tasks = require "engine.tasks"

local M = {}
for k, v in pairs(core) do M[k] = v end

M.tasks = tasks.list
M.task = tasks.get

-- The options with their task resolved, or the options as they are (matmul's problem, a
-- problem resolved already, no task at all).
local function resolved(opts, where)
  if type(opts) ~= "table" then return opts end
  local problem = type(opts.problem) == "table" and opts.problem or {}
  local task = opts.task
  if task == nil then task = problem.task end
  if task == nil or problem.spec ~= nil then return opts end
  local p = {}
  for k, v in pairs(problem) do p[k] = v end
  p.task = task
  if opts.size ~= nil then p.size = opts.size end
  local ok, r = pcall(tasks.resolve, p)
  if not ok then error(where .. ": " .. tostring(r), 0) end
  local out = {}
  for k, v in pairs(opts) do out[k] = v end
  out.task, out.size, out.problem = nil, nil, r
  return out
end

function M.evaluate(source, opts) return core.evaluate(source, resolved(opts, "bench.evaluate")) end
function M.evaluate_batch(sources, opts)
  return core.evaluate_batch(sources, resolved(opts, "bench.evaluate_batch"))
end
function M.submit_batch(sources, opts)
  return core.submit_batch(sources, resolved(opts, "bench.submit_batch"))
end
function M.reference(opts) return core.reference(resolved(opts, "bench.reference")) end
function M.check_options(opts) return core.check_options(resolved(opts, "bench.check_options")) end

-- {task =, size =, seed =, call =}: the call stays beside the resolved problem.
function M.task_inputs(problem)
  if type(problem) ~= "table" then return core.task_inputs(problem) end
  local p = {}
  for k, v in pairs(problem) do if k ~= "call" then p[k] = v end end
  local out = {}
  for k, v in pairs(resolved({problem = p}, "bench.task_inputs").problem) do out[k] = v end
  out.call = problem.call
  return core.task_inputs(out)
end

return M
