-- A held-out comparison's figures from its kernels, the one definition that heldout.lua
-- stores and the results page's claims recompute: per part and policy the mean reward,
-- the verified share and the mean roofline score over the policy's kernels; the parts'
-- mean ("overall", each part alike); learned minus base.
--
--   local hf = require "report.heldout_figures"
--   local parts, overall = hf.seed_figures(prompts, {"sizes", "wordings", "tasks"})
--   parts.sizes.gain.roofline, overall.learned.ok

local M = {}

M.figures = {"reward", "ok", "roofline"}

-- One policy's figures over prompts (each {part =, kernels = {{policy =, status =,
-- reward =, roofline =}, ...}}): {reward, ok, roofline, kernels, prompts}; the roofline
-- is nil when a kernel has none; nil without kernels.
function M.policy_figures(prompts, policy)
  local n, sum, ok, roof = 0, 0, 0, 0
  for _, p in ipairs(prompts) do
    for _, k in ipairs(p.kernels) do
      if k.policy == policy then
        n, sum, ok = n + 1, sum + k.reward, ok + (k.status == "ok" and 1 or 0)
        roof = roof and k.roofline and roof + k.roofline or nil
      end
    end
  end
  if n == 0 then return nil end
  return {reward = sum / n, ok = ok / n, roofline = roof and roof / n, kernels = n, prompts = #prompts}
end

-- The kernels that verified among a policy's figures of a part (0 for a mean of parts,
-- which counts no kernels of its own).
function M.verified(f)
  return (f and f.kernels) and math.floor(f.ok * f.kernels + 0.5) or 0
end

-- Learned minus base, figure by figure (empty without both).
function M.gain(base, learned)
  local g = {}
  if not (base and learned) then return g end
  for _, f in ipairs(M.figures) do
    if base[f] and learned[f] then g[f] = learned[f] - base[f] end
  end
  return g
end

-- The mean of the named parts' figures for a policy (each part alike); nil if none has any.
function M.mean_of_parts(parts, names, policy)
  local sums, n = {reward = 0, ok = 0, roofline = 0}, 0
  for _, name in ipairs(names) do
    local f = parts[name] and parts[name][policy]
    if f then
      n = n + 1
      for _, k in ipairs(M.figures) do sums[k] = sums[k] and f[k] and sums[k] + f[k] or nil end
    end
  end
  if n == 0 then return nil end
  return {reward = sums.reward / n, ok = sums.ok / n, roofline = sums.roofline and sums.roofline / n}
end

-- A seed's figures: parts = {[name] = {base =, learned =, gain =}} for the parts that have
-- prompts, and overall = {base =, learned =, gain =} over them.
function M.seed_figures(prompts, part_names)
  local by_part = {}
  for _, p in ipairs(prompts) do
    by_part[p.part] = by_part[p.part] or {}
    table.insert(by_part[p.part], p)
  end
  local parts = {}
  for _, name in ipairs(part_names) do
    if by_part[name] then
      local b, l = M.policy_figures(by_part[name], "base"), M.policy_figures(by_part[name], "learned")
      parts[name] = {base = b, learned = l, gain = M.gain(b, l)}
    end
  end
  local b, l = M.mean_of_parts(parts, part_names, "base"), M.mean_of_parts(parts, part_names, "learned")
  return parts, {base = b, learned = l, gain = M.gain(b, l)}
end

return M
