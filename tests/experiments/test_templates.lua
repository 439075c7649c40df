-- templates.lua: the search of kernelgen's space with a run's evaluation, its resume, and
-- the re-measurement of its best kernels beside the runs' best on the real benchmark.
-- The runs are made with the stand-ins (their best kernels are the labelled ones in tests/data/kernels);
-- the search and the re-measurement use the engine's bench.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local primitives = require "primitives"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local templates = dofile(engine.scripts[1] .. "/templates.lua")
local parse = primitives.parse

local function make_runs(out, size)
  local argv = {"--out=" .. out, "--profile=paper", "--G=4", "--prompts_per_step=2", "--size=" .. size,
                "--opt=O3", "--beta=0.0", "--lr=0.0,5e-7", "--steps=2", "--seeds=2"}
  return exp1.run(parse(exp1, "experiment1", argv), fakes.deps())
end

local function stored(dir)
  local run = store.open(dir, {read_only = true})
  local rows = {}
  for _, s in ipairs(run:samples{}) do rows[#rows + 1] = {s.id, s.iteration, s.code, s.status} end
  local evaluated = run:count()
  run:close()
  return rows, evaluated
end

t.test("the search evaluates its budget, resumes, and is re-measured beside every run's best", function()
  local runs = t.tmpdir() .. "/e1"
  make_runs(runs, 64)
  local out = t.tmpdir() .. "/templates"
  templates.main({[0] = "templates.lua", runs, "--out=" .. out, "--budget=24", "--batch=8",
                  "--keep=2", "--repeats=2", "--top=2"})
  local first, evaluated = stored(out)
  t.eq(evaluated, 24)
  t.eq(#first, 24)
  local rounds = {}
  for _, r in ipairs(first) do rounds[r[2]] = (rounds[r[2]] or 0) + 1 end
  t.eq(rounds, {[0] = 16, [1] = 8}, "half at random, then one local round of 8 neighbours")
  -- the runs' prompts asked for the machine's ISA; the templates keep to it
  local wide = 0
  for _, r in ipairs(first) do wide = wide + (r[3]:find("_mm512_", 1, true) and 1 or 0) end
  if bench.machine().simd == "avx512" then t.ok(wide > 0, "AVX-512 kernels searched where it runs")
  else t.eq(wide, 0, "no AVX-512 kernel for a machine without it") end

  local report = json.read(out .. "/compare.json")
  t.eq(report.size, 64)
  t.ok(report.openblas.median > 0, "OpenBLAS was measured")
  t.eq(#report.openblas.values, 2, "once a round")
  local sources, groups = {}, {}
  for _, k in ipairs(report.kernels) do
    sources[k.source] = (sources[k.source] or 0) + 1
    if k.group then groups[k.group] = (groups[k.group] or 0) + 1 end
    t.eq(#k.gflops + #k.failures, 2, k.name .. ": measured in every round")
  end
  t.eq(sources.templates, 2)
  t.eq(groups, {["beta=0,lr=0,opt=O3"] = 2, ["beta=0,lr=5e-07,opt=O3"] = 2}, "each seed's best")
  for _, k in ipairs(report.kernels) do
    if k.source == "templates" then t.ok(k.median and k.median > 0, k.name .. " verified again") end
  end
  -- the runs' best kernel (the labelled AVX-512 one) runs where AVX-512 does, and is a compile
  -- error elsewhere, each round
  local md = assert(io.open(out .. "/compare.md")):read("a")
  t.contains(md, "| templates #1 |")
  for _, k in ipairs(report.kernels) do
    if k.source ~= "templates" then
      if bench.machine().simd == "avx512" then t.eq(#k.gflops, 2, k.name)
      else t.eq(k.failures, {"compile_error", "compile_error"}, k.name) end
    end
  end
  if bench.machine().simd == "avx512" then t.contains(md, "the best template kernel") end

  -- a larger budget goes on from the stored kernels
  templates.main({[0] = "templates.lua", runs, "--out=" .. out, "--budget=32", "--batch=8",
                  "--keep=2", "--repeats=1", "--top=1", "--resume"})
  local second
  second, evaluated = stored(out)
  t.eq(evaluated, 32)
  t.eq(table.move(second, 1, 24, 1, {}), first, "the first 24 kernels are kept as they were")
end)

t.test("runs of different evaluations, a missing run and a used --out are refused", function()
  local a, b = t.tmpdir() .. "/a", t.tmpdir() .. "/b"
  make_runs(a, 32)
  make_runs(b, 40)
  local text, ok, code = primitives.engine("templates.lua", a, b, "--out=" .. t.tmpdir() .. "/x")
  t.ok(not ok and code == 1, text)
  t.contains(text, "were evaluated with different --size (32, 40)")
  text, ok, code = primitives.engine("templates.lua", t.tmpdir() .. "/none")
  t.ok(not ok and code == 1, text)
  t.contains(text, "no such directory")
  text, ok, code = primitives.engine("templates.lua")
  t.ok(not ok and code == 2, text)
  t.contains(text, "usage: engine templates.lua RUN_DIR")
  local out = t.tmpdir() .. "/t"
  templates.main({[0] = "templates.lua", a, "--out=" .. out, "--budget=4", "--batch=4", "--repeats=1",
                  "--top=1"})
  text, ok, code = primitives.engine("templates.lua", a, "--out=" .. out, "--budget=8")
  t.ok(not ok and code == 1, text)
  t.contains(text, "already holds a run: pass --resume")
end)

t.run()
