-- The arithmetic of multi-turn episodes (experiment3.lua): the reward each turn earns, an
-- episode's discounted returns, and turn-level leave-one-out advantages over a group of
-- episodes of one prompt (TRLOO, as Dr. Kernel trains multi-turn refinement), whose
-- arithmetic per turn is the trainer's (train.advantages). Functions of numbers, so they
-- are tested on their own.
--
--   local episodes = require "method.episodes"
--   episodes.turn_rewards({10, 25, 20}, "improvement")   -- {10, 15, -5}
--   episodes.returns({1, 2, 4}, 0.5)                      -- {3, 4, 4}: R_t = r_t + gamma R_{t+1}
--   episodes.trloo({{3, 4}, {1, 2}, {2, 0}})              -- [i][t]: R_{i,t} - mean_{j ~= i} R_{j,t}
--   episodes.advantages(groups, "group")                  -- trloo per group, scaled
--
-- An episode is a list over its turns; a group a list of episodes with the same number of
-- turns.

local episodes = {}

-- What is added to a standard deviation before dividing by it: the trainer's own (adv_eps),
-- so that a group whose returns agree gets finite advantages.
episodes.eps = 1e-4

-- How each turn is rewarded (--turn_reward).
episodes.turn_reward_kinds = {"raw", "improvement"}

-- How advantages are scaled (--scale_rewards): as the trainer scales its group ones.
episodes.scales = {"none", "group", "batch"}

local function finite(x) return type(x) == "number" and x == x and math.abs(x) ~= math.huge end

-- A list of finite numbers, else an error naming the function and the bad entry.
local function check_numbers(fn, what, xs)
  if type(xs) ~= "table" then
    error(string.format("episodes.%s: %s must be a list of numbers, got a %s", fn, what, type(xs)), 3)
  end
  for i = 1, #xs do
    if not finite(xs[i]) then
      error(string.format("episodes.%s: %s %d is %s, not a finite number", fn, what, i, tostring(xs[i])), 3)
    end
  end
  return xs
end

-- The episode's turn rewards, copied (raw), or each turn's gain over the one before
-- (improvement: the first turn keeps its own).
function episodes.turn_rewards(raw, kind)
  check_numbers("turn_rewards", "reward", raw)
  local out = {}
  if kind == "raw" then
    for t, r in ipairs(raw) do out[t] = r end
  elseif kind == "improvement" then
    for t, r in ipairs(raw) do out[t] = t == 1 and r or r - raw[t - 1] end
  else
    error(string.format("episodes.turn_rewards: no kind '%s' (have: %s)", tostring(kind),
                        table.concat(episodes.turn_reward_kinds, ", ")), 2)
  end
  return out
end

-- Discounted returns: R_t = sum over k >= t of gamma^(k - t) r_k, gamma in [0, 1].
function episodes.returns(rewards, gamma)
  check_numbers("returns", "reward", rewards)
  if not finite(gamma) or gamma < 0 or gamma > 1 then
    error("episodes.returns: the discount must be a number in [0, 1], got " .. tostring(gamma), 2)
  end
  local out, ahead = {}, 0.0
  for t = #rewards, 1, -1 do
    ahead = rewards[t] + gamma * ahead
    out[t] = ahead
  end
  return out
end

-- A group's returns checked: a non-empty list of episodes, each of the same number of
-- turns. Returns that number.
local function check_group(fn, group)
  if type(group) ~= "table" or #group == 0 then
    error("episodes." .. fn .. ": a group must be a non-empty list of episodes' returns", 3)
  end
  local turns
  for i, episode in ipairs(group) do
    if type(episode) ~= "table" or #episode == 0 then
      error(string.format("episodes.%s: episode %d must be a non-empty list of returns", fn, i), 3)
    end
    check_numbers(fn, "episode " .. i .. "'s return", episode)
    turns = turns or #episode
    if #episode ~= turns then
      error(string.format("episodes.%s: episode %d has %d turns, episode 1 has %d", fn, i, #episode, turns), 3)
    end
  end
  return turns
end

-- Turn-level leave-one-out advantages of one group: A_{i,t} = R_{i,t} - b_{i,t}, where
-- b_{i,t} is the mean of the other episodes' returns at turn t. A group of one episode
-- has no other to compare with: its advantages are 0 (no signal, as a GRPO group of one).
function episodes.trloo(group)
  check_group("trloo", group)
  return episodes.advantages({group}, "none")[1]
end

-- TRLOO advantages of a step's groups (groups[g][i][t] returns), scaled per turn: none;
-- group (divided by the std of the group's returns at that turn + eps); batch (by the std
-- of every group's returns at that turn + eps). Returns advantages of the same shape.
-- Each turn's arithmetic is the trainer's own (train.advantages, leave-one-out baseline),
-- so that advantages are computed in one place.
function episodes.advantages(groups, scale)
  scale = scale or "none"
  if scale ~= "none" and scale ~= "group" and scale ~= "batch" then
    error(string.format("episodes.advantages: no scaling '%s' (have: %s)", tostring(scale),
                        table.concat(episodes.scales, ", ")), 2)
  end
  if type(groups) ~= "table" then error("episodes.advantages: groups must be a list of groups", 2) end
  local out, turns = {}, 0
  for g, group in ipairs(groups) do
    turns = math.max(turns, check_group("advantages", group))
    out[g] = {}
    for i = 1, #group do out[g][i] = {} end
  end
  for t = 1, turns do
    -- the groups that reach turn t, each as its column of returns
    local columns, which = {}, {}
    for g, group in ipairs(groups) do
      if #group[1] >= t then
        local col = {}
        for i, episode in ipairs(group) do col[i] = episode[t] end
        columns[#columns + 1], which[#which + 1] = col, g
      end
    end
    local a = train.advantages(columns, {scale = scale, baseline = "leave_one_out", eps = episodes.eps})
    for k, g in ipairs(which) do
      for i = 1, #groups[g] do out[g][i][t] = a[k][i] end
    end
  end
  return out
end

return episodes
