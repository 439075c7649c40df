-- Runs an experiment script with the test primitives, as a separate engine process:
--   engine run_experiment.lua experiment1 --out=DIR --steps=3 ...
-- The end-to-end tests kill it (FAKE_KILL_AT_BATCH) and run it again with --resume.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path
local experiment = require "experiment"
local primitives = require "primitives"

local name = assert(arg[1], "usage: run_experiment.lua experiment1|experiment2 [options]")
local exp = dofile(engine.scripts[1] .. "/" .. name .. ".lua")
local argv = {[0] = name .. ".lua"}
for _, o in ipairs(primitives.options()) do argv[#argv + 1] = o end
for i = 2, #arg do argv[#argv + 1] = arg[i] end
exp.run(experiment.parse(argv, exp.spec), primitives.deps())
