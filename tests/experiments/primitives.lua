-- The primitives the end-to-end tests run the experiments with.
--   "fake":   the stand-ins of fakes.lua (no model needed);
--   "engine": the engine's own policy, bench and train modules, with the tiny random
--             model whose directory EXPERIMENTS_TEST_MODEL names.
local PRIMITIVES = os.getenv("EXPERIMENTS_PRIMITIVES") or "fake"

local M = {fake = PRIMITIVES == "fake"}

-- deps for experiment.run.
function M.deps()
  if M.fake then return require("fakes").deps() end
  return {policy = require "engine.policy", bench = require "engine.bench",
          train = require "engine.train"}
end

-- Command-line options the primitives need (the model of the engine's primitives).
function M.options()
  if M.fake then return {"--model=fake-model"} end
  return {"--model=" .. assert(os.getenv("EXPERIMENTS_TEST_MODEL"),
                               "EXPERIMENTS_TEST_MODEL must name the tiny test model")}
end

return M
