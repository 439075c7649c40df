-- The primitives the end-to-end tests run the experiments with.
--   "fake":   the stand-ins of fakes.lua (no model needed);
--   "engine": the engine's own policy, bench and train modules, with the tiny random
--             model whose directory EXPERIMENTS_TEST_MODEL names.
local PRIMITIVES = os.getenv("EXPERIMENTS_PRIMITIVES") or "fake"

local M = {fake = PRIMITIVES == "fake"}

-- deps for an experiment script's M.run(opts, deps).
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

-- Parses an experiment's command line with the primitives' options first, as a user
-- would type it: parse(exp1, "experiment1", {"--steps=2"}).
function M.parse(exp, name, extra)
  local argv = {[0] = name .. ".lua"}
  for _, o in ipairs(M.options()) do argv[#argv + 1] = o end
  for _, o in ipairs(extra) do argv[#argv + 1] = o end
  return require("run.options").parse(argv, exp.spec)
end

-- Runs `engine SCRIPT args...` ($ENGINE_TEST_EXE); returns its output (stdout and
-- stderr), success and exit status.
function M.engine(script, ...)
  return M.engine_with({}, script, ...)
end

-- M.engine with environment variables set for the child: {NAME = "value"}.
function M.engine_with(env, script, ...)
  local exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
  local parts = {}
  for name, value in pairs(env) do parts[#parts + 1] = string.format("%s=%q", name, value) end
  parts[#parts + 1] = string.format("%q", exe)
  parts[#parts + 1] = string.format("%q", script)
  for _, a in ipairs{...} do parts[#parts + 1] = string.format("%q", a) end
  local pipe = io.popen(table.concat(parts, " ") .. " 2>&1")
  local out = pipe:read("a")
  local ok, _, code = pipe:close()
  return out, ok, code
end

return M
