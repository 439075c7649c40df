-- Rewards: what a group of evaluated kernels is worth to the GRPO update.
--
-- Every scheme is a plain function from a group's results (a list of tables with
-- `status` and `gflops`) to a list of numbers, one per result, so a user can replace
-- one with their own:
--
--   local reward = require "method.reward"
--   local rewards = reward.gflops(results)             -- Eq. 3 of the paper
--   local rewards = reward.normalized(results)         -- Experiment 2
--   local rewards = reward.kernelcompare(results, {baseline_gflops = 20})
--   reward.schemes.mine = function(results, ctx) ... end   -- then --reward=mine

local reward = {}

-- Eq. 3: the penalty of each failure; a successful kernel earns its GFLOPS.
reward.penalties = {
  format_violation = -100,
  library_violation = -100,
  compile_error = -40,
  timeout = -30,
  runtime_error = -20,
  verification_error = -10,
  -- Not in the paper: a measurement the harness refused (work left running after the
  -- call, a forged timing record, an impossible figure). As severe as a library
  -- violation: a kernel that games the reward must never gain by it.
  rejected = -100,
}

-- Every status the pipeline produces, in the order of Eq. 3 (reports count them so).
reward.statuses = {"format_violation", "library_violation", "compile_error", "timeout",
                   "runtime_error", "verification_error", "rejected", "ok"}

-- What a successful kernel's speed is for rewards: its task's unit (r.speed, GB/s for a
-- memory-bound task), else its GFLOPS.
function reward.speed(r) return r.speed or r.gflops end

local function check_result(r, i)
  if type(r) ~= "table" then
    error(string.format("reward: result %d is a %s, not a table", i, type(r)), 3)
  end
  if r.status ~= "ok" and reward.penalties[r.status] == nil then
    error(string.format("reward: result %d has unknown status '%s'", i, tostring(r.status)), 3)
  end
  if r.status == "ok" and type(r.gflops) ~= "number" then
    error(string.format("reward: result %d is ok but has no gflops", i), 3)
  end
end

-- Eq. 3 for one result.
function reward.eq3(result)
  check_result(result, 1)
  if result.status == "ok" then return reward.speed(result) end
  return reward.penalties[result.status]
end

-- Experiment 1: Eq. 3 for each kernel of the group (raw GFLOPS on success).
function reward.gflops(results)
  local out = {}
  for i, r in ipairs(results) do
    check_result(r, i)
    out[i] = r.status == "ok" and reward.speed(r) or reward.penalties[r.status]
  end
  return out
end

-- Experiment 2: a success earns its GFLOPS as a percentage of the group's best
-- (GFLOPS / group max x 100), so every group's best kernel earns 100 whatever the stage;
-- failures keep the penalties of Eq. 3.
function reward.normalized(results)
  local best = 0
  for i, r in ipairs(results) do
    check_result(r, i)
    if r.status == "ok" and reward.speed(r) > best then best = reward.speed(r) end
  end
  local out = {}
  for i, r in ipairs(results) do
    if r.status == "ok" then
      out[i] = best > 0 and reward.speed(r) / best * 100 or 0
    else
      out[i] = reward.penalties[r.status]
    end
  end
  return out
end

-- The KernelCompare weighting: 0.4 if it compiles, 0.4 more if it is correct, 0.2 more
-- if it is faster than the baseline (ctx.baseline_gflops, in the task's unit: GB/s for a
-- memory-bound task; by default the group's parent/seed kernel as the caller gives it).
reward.kernelcompare_weights = {compiles = 0.4, correct = 0.4, faster = 0.2}

function reward.kernelcompare(results, ctx)
  local baseline = ctx and ctx.baseline_gflops
  if type(baseline) ~= "number" then
    error("reward.kernelcompare: needs ctx.baseline_gflops (the GFLOPS to beat)", 2)
  end
  local w = reward.kernelcompare_weights
  local compiled = {timeout = true, runtime_error = true, verification_error = true, rejected = true,
                    ok = true}
  local out = {}
  for i, r in ipairs(results) do
    check_result(r, i)
    local v = 0
    if compiled[r.status] then v = v + w.compiles end
    if r.status == "ok" then
      v = v + w.correct
      if reward.speed(r) > baseline then v = v + w.faster end
    end
    out[i] = v
  end
  return out
end

-- The schemes the experiments can name with --reward.
reward.schemes = {
  gflops = reward.gflops,
  normalized = reward.normalized,
  kernelcompare = reward.kernelcompare,
}

function reward.scheme(name)
  local fn = reward.schemes[name]
  if not fn then
    local names = {}
    for k in pairs(reward.schemes) do names[#names + 1] = k end
    table.sort(names)
    error(string.format("reward: no scheme '%s' (have: %s)", tostring(name),
                        table.concat(names, ", ")), 2)
  end
  return fn
end

return reward
