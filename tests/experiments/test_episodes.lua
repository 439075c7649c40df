-- The arithmetic of multi-turn episodes (scripts/lib/method/episodes.lua): turn rewards, discounted
-- returns and turn-level leave-one-out advantages, against values worked out by hand.
local t = require "engine.test"
local episodes = require "method.episodes"

local function near_all(got, want, what)
  t.eq(#got, #want, (what or "") .. " length")
  for i = 1, #want do
    if type(want[i]) == "table" then near_all(got[i], want[i], (what or "") .. "[" .. i .. "]")
    else t.near(got[i], want[i], 1e-12, (what or "") .. "[" .. i .. "]") end
  end
end

t.test("a turn earns its raw reward, or its gain over the previous turn", function()
  t.eq(episodes.turn_rewards({10, 25, 20}, "raw"), {10, 25, 20})
  t.eq(episodes.turn_rewards({10, 25, 20}, "improvement"), {10, 15, -5})
  t.eq(episodes.turn_rewards({-40, 30}, "improvement"), {-40, 70}, "a fixed compile error gains 70")
  t.eq(episodes.turn_rewards({7}, "improvement"), {7}, "one turn: its own reward")
  local raw = {1, 2}
  local copy = episodes.turn_rewards(raw, "raw")
  copy[1] = 99
  t.eq(raw[1], 1, "the input is not changed")
  t.raises(function() episodes.turn_rewards({1, 2}, "delta") end, "no kind 'delta' (have: raw, improvement)")
  t.raises(function() episodes.turn_rewards({1, "x"}, "raw") end, "reward 2 is x, not a finite number")
end)

t.test("returns: R_t = r_t + gamma R_{t+1}", function()
  t.eq(episodes.returns({1, 2, 4}, 1.0), {7, 6, 4}, "gamma 1: the sum of what is left")
  t.eq(episodes.returns({1, 2, 4}, 0.5), {3, 4, 4}, "4; 2 + 0.5 x 4; 1 + 0.5 x 4")
  t.eq(episodes.returns({1, 2, 4}, 0), {1, 2, 4}, "gamma 0: each turn's own")
  near_all(episodes.returns({-40, 10, 30}, 0.9), {-40 + 0.9 * 10 + 0.81 * 30, 10 + 0.9 * 30, 30})
  t.eq(episodes.returns({5}, 0.5), {5})
  t.eq(episodes.returns({}, 1), {})
  t.raises(function() episodes.returns({1, 2}, 1.5) end, "the discount must be a number in [0, 1], got 1.5")
  t.raises(function() episodes.returns({1, 2}, -0.1) end, "in [0, 1]")
  t.raises(function() episodes.returns({1, 0 / 0}, 1) end, "reward 2 is")
  t.raises(function() episodes.returns("1,2", 1) end, "must be a list of numbers, got a string")
end)

-- The unbiased standard deviation, written out here to check the trainer's against.
local function std(values)
  local n, sum = #values, 0.0
  if n < 2 then return 0.0 end
  for _, v in ipairs(values) do sum = sum + v end
  local mean, ss = sum / n, 0.0
  for _, v in ipairs(values) do ss = ss + (v - mean) * (v - mean) end
  return math.sqrt(ss / (n - 1))
end

t.test("TRLOO: each return minus the mean of the other episodes' at the same turn", function()
  -- three episodes of two turns: turn 1 returns 3, 1, 2; turn 2 returns 4, 2, 0
  local a = episodes.trloo({{3, 4}, {1, 2}, {2, 0}})
  -- turn 1: 3 - (1 + 2)/2 = 1.5; 1 - (3 + 2)/2 = -1.5; 2 - (3 + 1)/2 = 0
  -- turn 2: 4 - (2 + 0)/2 = 3;   2 - (4 + 0)/2 = 0;    0 - (4 + 2)/2 = -3
  near_all(a, {{1.5, 3}, {-1.5, 0}, {0, -3}})
  -- leave-one-out is G/(G-1) times the return minus the group's mean
  local g = {{10}, {20}, {30}, {60}}
  local mean = 30
  for i, adv in ipairs(episodes.trloo(g)) do t.near(adv[1], 4 / 3 * (g[i][1] - mean), 1e-12) end
  near_all(episodes.trloo({{5, 5}, {5, 5}}), {{0, 0}, {0, 0}}, "equal returns: no advantage")
end)

t.test("groups of one and two episodes", function()
  t.eq(episodes.trloo({{7, 3}}), {{0, 0}}, "one episode: no other to compare with, no signal")
  near_all(episodes.trloo({{7, 3}, {1, 5}}), {{6, -2}, {-6, 2}}, "two: each against the other")
  near_all(episodes.advantages({{{7, 3}}}, "group"), {{{0, 0}}}, "one episode, scaled: still 0")
  -- two episodes scaled by their std: |R1 - R2| / sqrt(2) at each turn
  local s = episodes.advantages({{{7, 3}, {1, 5}}}, "group")
  near_all(s, {{{6 / (6 / math.sqrt(2) + 1e-4), -2 / (2 / math.sqrt(2) + 1e-4)},
                {-6 / (6 / math.sqrt(2) + 1e-4), 2 / (2 / math.sqrt(2) + 1e-4)}}})
end)

t.test("advantages of a step's groups: unscaled, by each group's std, by the step's", function()
  local groups = {{{3, 4}, {1, 2}, {2, 0}}, {{10, 10}, {10, 10}, {10, 10}}}
  local none = episodes.advantages(groups)
  near_all(none, {{{1.5, 3}, {-1.5, 0}, {0, -3}}, {{0, 0}, {0, 0}, {0, 0}}})
  t.eq(episodes.advantages(groups, "none"), none)
  -- group: turn 1's returns 3, 1, 2 have std 1; turn 2's 4, 2, 0 have std 2
  local group = episodes.advantages(groups, "group")
  near_all(group[1], {{1.5 / (1 + 1e-4), 3 / (2 + 1e-4)}, {-1.5 / (1 + 1e-4), 0}, {0, -3 / (2 + 1e-4)}})
  near_all(group[2], {{0, 0}, {0, 0}, {0, 0}}, "a flat group stays 0")
  -- batch: the std of every group's returns at the turn (3, 1, 2, 10, 10, 10 at turn 1)
  local batch = episodes.advantages(groups, "batch")
  local s1 = std({3, 1, 2, 10, 10, 10})
  t.near(batch[1][1][1], 1.5 / (s1 + 1e-4), 1e-12)
  t.near(batch[1][3][2], -3 / (std({4, 2, 0, 10, 10, 10}) + 1e-4), 1e-12)
end)

t.test("bad input is refused with what is wrong", function()
  t.raises(function() episodes.trloo({}) end, "a group must be a non-empty list")
  t.raises(function() episodes.trloo({{1, 2}, {3}}) end, "episode 2 has 1 turns, episode 1 has 2")
  t.raises(function() episodes.trloo({{1, 2}, {3, "4"}}) end, "episode 2's return 2 is 4, not a finite number")
  t.raises(function() episodes.trloo({{1}, {}}) end, "episode 2 must be a non-empty list")
  t.raises(function() episodes.trloo({{1}, {math.huge}}) end, "not a finite number")
  t.raises(function() episodes.advantages({{{1}}}, "std") end, "no scaling 'std' (have: none, group, batch)")
  t.raises(function() episodes.advantages(5) end, "groups must be a list")
end)

t.run()
