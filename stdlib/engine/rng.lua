-- The scripts' reproducible random numbers, independent of Lua's global generator, so that
-- a corpus, a report's p-values or a resumed run's choices do not depend on what ran
-- before. Two streams, each kept as the data already drawn with it need:
--
--   local rng = require "engine.rng"
--   local r = rng.new(42)          -- splitmix64 (a string seed is hashed): r:uniform(),
--   r:int(1, 6), r:pick(list), r:chance(0.3), r:weighted({a = 2, b = 1}), r:next()
--   local u = rng.uniforms(7)      -- the same stream as a function: u() in [0, 1)
--   local k = rng.xorshift(3)      -- xorshift64*, as a function: k(n) in 1..n (SQD's choices)

local rng = {}

local Rng = {}
Rng.__index = Rng

local function hash_string(s)
  local h = 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

function rng.new(seed)
  if type(seed) == "string" then seed = hash_string(seed) end
  if math.type(seed) ~= "integer" then
    if type(seed) == "number" and seed == math.floor(seed) then seed = math.tointeger(seed)
    else error("rng.new: the seed must be an integer or a string, got " .. tostring(seed), 2) end
  end
  return setmetatable({state = seed}, Rng)
end

function Rng:next()
  self.state = self.state + 0x9E3779B97F4A7C15
  local z = self.state
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end

-- In [0, 1).
function Rng:uniform() return (self:next() >> 11) * (1.0 / 9007199254740992.0) end

-- In [lo, hi], both included.
function Rng:int(lo, hi)
  if hi < lo then error(string.format("rng:int: empty range [%d, %d]", lo, hi), 2) end
  return lo + math.floor(self:uniform() * (hi - lo + 1))
end

function Rng:pick(list)
  if #list == 0 then error("rng:pick: empty list", 2) end
  return list[self:int(1, #list)]
end

function Rng:chance(p) return self:uniform() < p end

-- A key of a {key = weight} table (keys visited in sorted order: reproducible).
function Rng:weighted(weights)
  local keys, total = {}, 0
  for k, w in pairs(weights) do if w > 0 then keys[#keys + 1] = k end end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do total = total + weights[k] end  -- summed in key order: the same bits in any process
  if total <= 0 then error("rng:weighted: no positive weight", 2) end
  local x = self:uniform() * total
  for _, k in ipairs(keys) do
    x = x - weights[k]
    if x < 0 then return k end
  end
  return keys[#keys]
end

function rng.is(x) return getmetatable(x) == Rng end

-- rng.new(seed)'s uniforms as a function (seed 1 when none).
function rng.uniforms(seed)
  local r = rng.new(seed or 1)
  return function() return r:uniform() end
end

-- xorshift64*: k(n) is an integer in 1..n.
function rng.xorshift(seed)
  local x = math.tointeger(seed) or 1
  if x == 0 then x = 0x9E3779B97F4A7C15 end
  return function(n)
    x = x ~ (x >> 12)
    x = x ~ (x << 25)
    x = x ~ (x >> 27)
    local r = (x * 0x2545F4914F6CDD1D) >> 1  -- non-negative
    return r % n + 1
  end
end

return rng
