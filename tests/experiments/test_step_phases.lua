-- perf/bench/step_phases_bench.lua on the committed confirmatory runs: the figures
-- docs/performance.md quotes for the two machines, and a clear error without runs.
local t = require "engine.test"
local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local root = engine.root

local function run(argv)
  local pipe = io.popen(string.format("cd %q && %q perf/bench/step_phases_bench.lua %s 2>&1", root, engine_exe, argv))
  local out = pipe:read("a")
  local ok = pipe:close()
  return ok, out
end

t.test("the EPYC's and the Xeon's learning steps, phase by phase, as docs/performance.md has them", function()
  local ok, out = run("data/confirmatory/e1 data/confirmatory/e1v5")
  t.ok(ok, out)
  t.contains(out, "400 steps")
  t.contains(out, "| sample | 2.00 | 2.82 | 0.315 | 0.446 | 1.42 |")
  t.contains(out, "| update | 2.58 | 3.26 | 0.407 | 0.500 | 1.23 |")
  t.contains(out, "completion tokens a step: 6390 and 6446")
end)

t.test("a directory without learning runs is named", function()
  local ok, out = run("data/confirmatory/e1 " .. t.tmpdir())
  t.ok(not ok)
  t.contains(out, "no step of a run named like 'lr=0.0003'")
  ok, out = run("data/confirmatory/e1")
  t.ok(not ok)
  t.contains(out, "give two run directories")
end)

t.run()
