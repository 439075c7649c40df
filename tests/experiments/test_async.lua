-- --async=1: the next step (SQD: group) is sampled while this one is evaluated, and
-- evaluated while this one trains. Checked on the stand-ins, whose completions carry the
-- skill (updates) of the policy that sampled them: every update after the first trains
-- on samples exactly one update old, nothing is lost or counted twice, a resumed run
-- goes on, and without benchmark workers the engine refuses the option.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local primitives = require "primitives"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local parse = primitives.parse

local E1 = {"--profile=paper", "--G=2", "--prompts_per_step=2", "--size=32", "--opt=O3",
            "--beta=0.0"}

local function run1(out, extra, deps)
  local argv = {"--out=" .. out}
  for _, a in ipairs(E1) do argv[#argv + 1] = a end
  for _, a in ipairs(extra) do argv[#argv + 1] = a end
  return exp1.run(parse(exp1, "experiment1", argv), deps)[1]
end

-- The steps' metrics: staleness, and whether the step's seconds were recorded.
local function steps(dir)
  local run = store.open(dir, {log_file = false})
  local rows = {}
  for _, m in ipairs(run:metrics()) do
    if m.kind == "step" or m.kind == "group" then
      rows[#rows + 1] = {step = m.step, staleness = m.staleness, timed = m.seconds and m.seconds.wall ~= nil}
    end
  end
  local samples = #run:samples{}
  run:close()
  return rows, samples
end

t.test("experiment 1: each update after the first trains on samples one update old", function()
  local deps = fakes.deps()
  local s = run1(t.tmpdir(), {"--steps=4", "--lr=5e-7", "--async=1"}, deps)
  t.eq(s.steps, 4)
  t.eq(deps.train.trainers[1].staleness, {0, 1, 1, 1})
  local rows, samples = steps(s.dir)
  t.eq(#rows, 4)
  for i, r in ipairs(rows) do
    t.eq(r.step, i)
    t.eq(r.staleness, i == 1 and 0 or 1)
    t.ok(r.timed, "step " .. i .. " records its wall time")
  end
  t.eq(samples, 4 * 2 * 2, "every step's kernels once")
  t.ok((deps.bench.submits or 0) >= 4, "the evaluations went to the background")
  -- in order: every update trains on the policy that sampled
  local sync = fakes.deps()
  run1(t.tmpdir(), {"--steps=4", "--lr=5e-7"}, sync)
  t.eq(sync.train.trainers[1].staleness, {0, 0, 0, 0})
  t.eq(sync.bench.submits, nil, "without --async nothing goes to the background")
end)

t.test("experiment 1: the first step sampled the same with and without --async", function()
  local a, b = fakes.deps(), fakes.deps()
  local sa = run1(t.tmpdir(), {"--steps=1", "--lr=5e-7", "--async=1"}, a)
  local sb = run1(t.tmpdir(), {"--steps=1", "--lr=5e-7"}, b)
  local function codes(dir)
    local run = store.open(dir, {log_file = false})
    local out = {}
    for i, x in ipairs(run:samples{}) do out[i] = x.code end
    run:close()
    return out
  end
  t.eq(codes(sa.dir), codes(sb.dir))
end)

t.test("experiment 1 with --async: a resumed run goes on from its last step", function()
  local out = t.tmpdir()
  local first = fakes.deps()
  run1(out, {"--steps=2", "--lr=5e-7", "--async=1"}, first)
  local again = fakes.deps()
  local s = run1(out, {"--steps=4", "--lr=5e-7", "--async=1", "--resume"}, again)
  t.eq(s.steps, 4)
  -- the step after a resume is sampled by the restored policy: nothing in flight survives
  t.eq(again.train.trainers[1].staleness, {0, 1})
  local rows, samples = steps(s.dir)
  t.eq(#rows, 4)
  t.eq(samples, 4 * 2 * 2, "no step twice, none lost")
end)

t.test("experiment 1 with --async and lr = 0: nothing to be stale against", function()
  local deps = fakes.deps()
  local s = run1(t.tmpdir(), {"--steps=3", "--lr=0", "--async=1"}, deps)
  local rows = steps(s.dir)
  for _, r in ipairs(rows) do t.eq(r.staleness, 0) end
end)

t.test("experiment 2: the groups of an iteration overlap, the iterations do not", function()
  local deps = fakes.deps()
  local out = t.tmpdir()
  local s = exp2.run(parse(exp2, "experiment2", {"--out=" .. out, "--iterations=2", "--profile=paper",
                                                 "--G=4", "--size=32", "--pool_size=2", "--opt=O3",
                                                 "--lr=5e-7", "--async=1"}),
                     deps)[1]
  t.eq(s.iterations, 2)
  local rows = steps(s.dir)
  t.ok(#rows >= 2, "groups were expanded")
  local st = deps.train.trainers[1].staleness
  t.eq(#st, #rows, "one update per group")
  t.eq(st[1], 0)
  for i = 2, #st do t.ok(st[i] <= 1, "at most one update stale: " .. i) end
  local zeros = 0
  for i = 1, #st do zeros = zeros + (st[i] == 0 and 1 or 0) end
  t.eq(zeros, 2, "each iteration's first group is sampled after the last update")
  for i, r in ipairs(rows) do t.eq(r.staleness, st[i]) end
end)

t.test("--async=1 without benchmark workers is refused before anything is made", function()
  local out = t.tmpdir() .. "/runs"
  local text, ok, code = primitives.engine("experiment1.lua", "--async=1", "--out=" .. out)
  t.ok(not ok and code == 1, "status 1: " .. text)
  t.contains(text, "--async=1 evaluates while the policy samples and trains: start benchmark workers")
  t.ok(not sys.exists(out), "no run directory was made")
  text, ok, code = primitives.engine("experiment2.lua", "--async=2", "--out=" .. out)
  t.ok(not ok and code == 2, "--async=2 is not an option value: " .. text)
end)

t.run()
