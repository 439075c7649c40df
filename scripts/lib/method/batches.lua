-- The batches of a supervised fine-tune over a fixed list of examples: epoch after epoch,
-- each a fresh permutation of the list drawn from the seed, so that a step's batch does
-- not depend on how often the run was resumed before it (pretrain.lua's corpus,
-- kernelcompare.lua's slow/fast pairs).
--
--   local batches = require "method.batches"
--   local cache = {}
--   for step = 1, steps do trainer:step(batches.at(examples, step, 8, seed, cache)) end

local rng = require "engine.rng"

local batches = {}

-- The examples of step `step` (from 1): `size` of them (the whole list when it holds
-- fewer), in the order of epoch e's permutation, which engine.rng.new(seed + e) draws (e
-- from 0). An epoch is as many whole batches as the list holds; the permutation's rest
-- is left out. `cache` keeps the current epoch's permutation from one call to the next.
function batches.at(examples, step, size, seed, cache)
  size = math.min(size, #examples)
  local per_epoch = #examples // size
  local epoch = (step - 1) // per_epoch
  if cache.epoch ~= epoch then
    local r = rng.new(seed + epoch)
    local order = {}
    for i = 1, #examples do order[i] = i end
    for i = #order, 2, -1 do
      local j = r:int(1, i)
      order[i], order[j] = order[j], order[i]
    end
    cache.epoch, cache.order = epoch, order
  end
  local first = ((step - 1) % per_epoch) * size
  local out = {}
  for i = 1, size do out[i] = examples[cache.order[first + i]] end
  return out
end

return batches
