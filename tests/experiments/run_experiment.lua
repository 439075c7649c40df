-- Runs an experiment script with the test primitives, as a separate engine process:
--   engine run_experiment.lua experiment1 --out=DIR --steps=3 ...
-- KILL_AT_BATCH=N: the N-th call of bench.evaluate_batch kills this process with
-- SIGKILL before it returns, as a crash in the middle of a step would; the end-to-end
-- tests then run it again with --resume.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path
local cli = require "core.cli"
local options = require "run.options"
local primitives = require "primitives"

local name = assert(arg[1], "usage: run_experiment.lua experiment1|experiment2 [options]")
local exp = dofile(engine.scripts[1] .. "/" .. name .. ".lua")
local argv = {[0] = name .. ".lua"}
for _, o in ipairs(primitives.options()) do argv[#argv + 1] = o end
for i = 2, #arg do argv[#argv + 1] = arg[i] end
local deps = primitives.deps()
local kill_at = tonumber(os.getenv("KILL_AT_BATCH") or "")
if kill_at then
  local bench, calls = deps.bench, 0
  deps.bench = setmetatable({evaluate_batch = function(sources, opts)
    calls = calls + 1
    local results = bench.evaluate_batch(sources, opts)
    if calls == kill_at then os.execute("kill -9 " .. sys.pid()) end
    return results
  end}, {__index = bench})
end
-- as the script's own main: a user's mistake ends in one line and status 1
cli.main(argv[0], function() exp.run(options.parse(argv, exp.spec), deps) end, argv)
