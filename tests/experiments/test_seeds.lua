-- Seeds as a sweep dimension: --seeds runs every configuration once per seed, each run
-- its own directory (',seed=S'), resumable on its own; one seed keeps today's names; bad
-- values and a conflict with --seed are one-line errors.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local options = require "run.options"
local primitives = require "primitives"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")

local parse = primitives.parse

local engine = primitives.engine

local E1 = {"--profile=paper", "--G=2", "--prompts_per_step=1", "--size=32", "--opt=O3",
            "--lr=0.0,5e-7", "--beta=0.0"}

t.test("--seeds: a count, a list or ranges; one seed is --seed", function()
  t.eq(options.parse_seeds("3"), {1, 2, 3})
  t.eq(options.parse_seeds("4,9,2"), {4, 9, 2})
  t.eq(options.parse_seeds(""), nil)
  -- ranges: a piece of a sweep, and one seed alone where "4" would be a count
  t.eq(options.parse_seeds("5-8"), {5, 6, 7, 8})
  t.eq(options.parse_seeds("4-4"), {4})
  t.eq(options.parse_seeds("1, 3-4, 9"), {1, 3, 4, 9})
  t.eq(select(2, options.parse_seeds("8-5")), "the range 8-5 runs backwards in '8-5'")
  t.eq(select(2, options.parse_seeds("1-3,2")), "seed 2 is listed twice in '1-3,2'")
  t.eq(select(2, options.parse_seeds("1-5000")), "at most 1000 seeds, got '1-5000'")
  local o = parse(exp1, "experiment1", {"--seeds=3", table.unpack(E1)})
  t.eq(o.seed_list, {1, 2, 3})
  local configs = exp1.configs(o)
  t.eq(#configs, 6, "2 configurations x 3 seeds")
  t.eq(configs[1], {opt = "O3", lr = 0.0, beta = 0.0, seed = 1})
  t.eq(configs[2], {opt = "O3", lr = 5e-7, beta = 0.0, seed = 1})
  t.eq(configs[6], {opt = "O3", lr = 5e-7, beta = 0.0, seed = 3})
  -- one seed: the configurations (and so the directory names) of a sweep without seeds
  for _, argv in ipairs{{}, {"--seeds=1"}, {"--seed=7"}} do
    for _, o in ipairs(E1) do argv[#argv + 1] = o end
    local one = parse(exp1, "experiment1", argv)
    t.eq(exp1.configs(one), {{opt = "O3", lr = 0.0, beta = 0.0}, {opt = "O3", lr = 5e-7, beta = 0.0}})
  end
  t.eq(parse(exp1, "experiment1", {"--seeds=1", table.unpack(E1)}).seed, 1)
  local o2 = parse(exp2, "experiment2", {"--seeds=2,5", "--opt=O3", "--lr=0.0"})
  t.eq(exp2.configs(o2), {{opt = "O3", lr = 0.0, seed = 2}, {opt = "O3", lr = 0.0, seed = 5}})
end)

t.test("the small profiles run 4 and 3 seeds; --seed or --seeds given by the user win", function()
  for exp, seeds in pairs{[exp1] = {1, 2, 3, 4}, [exp2] = {1, 2, 3}} do
    t.eq(options.parse({[0] = "x.lua"}, exp.spec).seed_list, seeds, "the default run")
    local one = options.parse({[0] = "x.lua", "--seed=7"}, exp.spec)
    t.eq(one.seed_list, {7})
    t.eq(one.seed, 7)
    t.eq(options.parse({[0] = "x.lua", "--seeds=4,5"}, exp.spec).seed_list, {4, 5})
    t.eq(options.parse({[0] = "x.lua", "--model=/m"}, exp.spec).seed_list, {1}, "the paper's: one seed")
  end
end)

t.test("bad --seeds values and --seed with --seeds are one-line errors", function()
  local out = t.tmpdir() .. "/runs"
  for _, case in ipairs{{"--seeds=0", "a count of seeds must be at least 1"},
                        {"--seeds=1,x", "expected a count N or a list of integer seeds"},
                        {"--seeds=1.5", "expected a count N or a list of integer seeds"},
                        {"--seeds=2,2", "seed 2 is listed twice"},
                        {"--seeds=,", "expected a count N or a list of integer seeds"}} do
    for _, script in ipairs{"experiment1.lua", "experiment2.lua"} do
      local text, ok, code = engine(script, case[1], "--out=" .. out)
      t.ok(not ok and code == 2, case[1] .. " exits 2: " .. text)
      t.ok(text:find("^" .. script:gsub("%.", "%%.") .. ": %-%-seeds: [^\n]*\n$"),
           "one line naming --seeds: " .. text)
      t.contains(text, case[2])
      t.ok(not sys.exists(out), "no run directory was made")
    end
  end
  local text, ok, code = engine("experiment1.lua", "--seed=2", "--seeds=3", "--out=" .. out)
  t.ok(not ok and code == 1, "status 1: " .. text)
  t.eq(text, "experiment1.lua: --seed=2 and --seeds=3 conflict: --seed runs one seed, --seeds "
             .. "several; give only one of them\n")
  t.ok(not sys.exists(out), "no run directory was made")
end)

t.test("experiment 1: a run per configuration and seed, each resumable", function()
  local out = t.tmpdir()
  local deps = primitives.deps()
  local summaries = exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1",
                                                         "--seeds=3", table.unpack(E1)}), deps)
  t.eq(#summaries, 6)
  local names = {}
  for _, s in ipairs(summaries) do names[#names + 1] = s.name end
  table.sort(names)
  t.eq(names, {"beta=0,lr=0,opt=O3,seed=1", "beta=0,lr=0,opt=O3,seed=2", "beta=0,lr=0,opt=O3,seed=3",
               "beta=0,lr=5e-07,opt=O3,seed=1", "beta=0,lr=5e-07,opt=O3,seed=2",
               "beta=0,lr=5e-07,opt=O3,seed=3"})
  local first_code = {}
  for _, s in ipairs(summaries) do
    t.eq(s.dir, out .. "/" .. s.name)
    local run = store.open(s.dir, {log_file = false})
    local id = run:config()
    t.eq(id.config.seed, s.config.seed, "the seed is part of the run's identity")
    t.eq(id.seeds, nil, "--seeds itself is not")
    t.eq(id.seed_list, nil)
    t.eq(run:get("step"), 1)
    if s.config.lr == 0 then first_code[s.config.seed] = run:samples{limit = 1}[1].code end
    run:close()
  end
  if primitives.fake then
    t.ok(first_code[1] ~= first_code[2] and first_code[2] ~= first_code[3],
         "each seed samples differently")
    t.eq(deps.policy.samples, 6)
  end
  -- --resume continues every seed's run; a missing one simply starts
  local more = exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=2", "--resume",
                                                    "--seeds=4", table.unpack(E1)}), primitives.deps())
  t.eq(#more, 8)
  for _, s in ipairs(more) do t.eq(s.steps, 2, s.name) end
  -- without --resume, an existing seed's run is refused
  t.raises(function()
    exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=2", "--seeds=2,3",
                                         table.unpack(E1)}), primitives.deps())
  end, "seed=2 already holds a run: pass --resume")
  -- a seed run resumed alone with --seed and --configs is another run (other identity)
  local one = exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--seed=2",
                                                   "--configs=lr=0", table.unpack(E1)}),
                       primitives.deps())
  t.eq(one[1].name, "beta=0,lr=0,opt=O3")
end)

t.test("experiment 2: seeds make distinct runs", function()
  local out = t.tmpdir()
  local summaries = exp2.run(parse(exp2, "experiment2", {"--out=" .. out, "--iterations=1",
                                                         "--profile=paper", "--G=4", "--size=32",
                                                         "--pool_size=2", "--opt=O3", "--lr=5e-7",
                                                         "--seeds=2"}), primitives.deps())
  t.eq(#summaries, 2)
  t.eq(summaries[1].name, "lr=5e-07,opt=O3,seed=1")
  t.eq(summaries[2].name, "lr=5e-07,opt=O3,seed=2")
  for _, s in ipairs(summaries) do
    local run = store.open(s.dir, {log_file = false})
    t.eq(run:config().config.seed, s.config.seed)
    run:close()
  end
end)

t.test("the report of a sweep over seeds: one row per configuration, drawn with bands", function()
  local out = t.tmpdir()
  local log, made = engine(here .. "/run_experiment.lua", "experiment1", "--out=" .. out, "--steps=2", "--seeds=2",
                          table.unpack(E1))
  t.ok(made, "the runs were made: " .. log)
  local text, ok = engine("report.lua", out)
  t.ok(ok, text)
  local md = assert(io.open(out .. "/report/report.md")):read("a")
  t.contains(md, "4 runs: 2 configurations over seeds.")
  t.contains(md, "| samples | seeds |")
  t.ok(md:find("\n| beta=0,lr=0,opt=O3 | [^\n]* | 2 %(1,2%) |\n"), "the baseline's row: " .. md)
  t.ok(md:find("\n| beta=0,lr=5e%-07,opt=O3 | [^\n]* | 2 %(1,2%) |\n"), "the learning row: " .. md)
  t.contains(md, "- `beta=0,lr=5e-07,opt=O3` against `beta=0,lr=0,opt=O3` (2 paired seeds): learning gain ")
  t.contains(assert(io.open(out .. "/report/gflops.gp")):read("a"), "filledcurves")
  if require("report.figures").available() then
    local png = assert(io.open(out .. "/report/reward.png", "rb")):read("a")
    t.eq(png:sub(1, 8), "\137PNG\r\n\26\n", "gnuplot drew the bands")
  end
end)

t.run()
