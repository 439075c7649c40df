-- The experiments' command lines: the paper's defaults, the sweeps and their subsets,
-- the small profile, and the errors a user meets first.
local t = require "engine.test"
local args = require "engine.args"
local experiment = require "experiment"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")

local function parse(exp, argv)
  argv[0] = "experiment.lua"
  return experiment.parse(argv, exp.spec)
end

t.test("the paper's values are the defaults with --model", function()
  local o = parse(exp1, {"--model=/m"})
  t.eq(o.profile, nil)
  t.eq({o.G, o.timeout, o.size, o.warmup, o.runs, o.steps, o.prompts_per_step},
       {64, 8.0, 256, 1, 3, 200, 8})
  t.eq(o.reward, "gflops")
  local o2 = parse(exp2, {"--model=/m"})
  t.eq({o2.G, o2.iterations, o2.beta, o2.reward}, {64, 9, 0.0, "normalized"})
end)

t.test("the trainer gets the paper's GRPO settings, LoRA only when asked", function()
  local o = parse(exp1, {"--model=/m"})
  t.eq(experiment.train_opts(o, {lr = 5e-7, beta = 0.01}),
       {lr = 5e-7, beta = 0.01, clip = 0.2, loss = "grpo", num_iterations = 1})
  local o2 = parse(exp2, {"--model=/m", "--lora_r=32", "--micro_batch=8"})
  t.eq(experiment.train_opts(o2, {lr = 5e-7}),
       {lr = 5e-7, beta = 0.0, clip = 0.2, loss = "grpo", num_iterations = 1, micro_batch = 8,
        lora = {r = 32, alpha = 64.0, dropout = 0.1}})
end)

t.test("experiment 1 sweeps 12 configurations; any subset can be chosen", function()
  local o = parse(exp1, {"--model=/m"})
  local configs = exp1.configs(o)
  t.eq(#configs, 12)
  t.eq(configs[1], {opt = "O0", lr = 2e-7, beta = 0.0})
  t.eq(configs[12], {opt = "O3", lr = 5e-7, beta = 0.01})
  t.eq(#exp1.configs(parse(exp1, {"--model=/m", "--configs=opt=O3"})), 6)
  t.eq(exp1.configs(parse(exp1, {"--model=/m", "--configs=opt=O3,lr=5e-7,beta=0.001"})),
       {{opt = "O3", lr = 5e-7, beta = 0.001}})
  t.eq(#exp1.configs(parse(exp1, {"--model=/m", "--configs=1,12"})), 2)
  t.raises(function() exp1.configs(parse(exp1, {"--model=/m", "--configs=opt=O2"})) end,
           "--configs: sweep: selector 'opt=O2' matches no configuration")
  t.raises(function() exp1.configs(parse(exp1, {"--model=/m", "--configs=13"})) end,
           "no configuration 13 (there are 12)")
  t.eq(exp1.configs(parse(exp1, {"--model=/m", "--opt=O3", "--lr=5e-7", "--beta=0.0"})),
       {{opt = "O3", lr = 5e-7, beta = 0.0}})
end)

t.test("experiment 2 sweeps 6 configurations", function()
  local configs = exp2.configs(parse(exp2, {"--model=/m"}))
  t.eq(#configs, 6)
  t.eq(configs[1], {opt = "O0", lr = 0.0})
  t.eq(configs[6], {opt = "O3", lr = 5e-7})
end)

t.test("without --model the small profile applies; explicit options still win", function()
  local o = parse(exp1, {})
  t.eq(o.profile, "small")
  t.eq(o.G, 16)
  t.eq(parse(exp1, {"--G=4"}).G, 4)
  t.eq(parse(exp1, {"--profile=paper"}).G, 64)
  t.eq(parse(exp2, {}).profile, "small")
end)

t.test("--help lists every option with its default", function()
  local _, _, help = args.try_parse({[0] = "experiment1.lua", "--help"}, exp1.spec)
  for _, name in ipairs{"--steps", "--G", "--timeout", "--size", "--warmup", "--runs", "--lr",
                        "--beta", "--opt", "--resume", "--model", "--configs", "--profile"} do
    t.contains(help, name)
  end
  t.contains(help, "[default: 64]")
  t.contains(help, "small:")
end)

t.test("a missing model is named, with what to do", function()
  local shipped = experiment.default_model
  experiment.default_model = t.tmpdir() .. "/small"
  local ok, err = pcall(experiment.model_dir, {}, {injected = false})
  experiment.default_model = shipped
  t.ok(not ok)
  t.contains(tostring(err), "/small is missing: restore it")
  t.contains(tostring(err), "pass --model=DIR")
  t.raises(function() experiment.model_dir({model = "/nowhere"}, {injected = false}) end,
           "--model=/nowhere: no Hugging Face checkpoint there")
  t.eq(experiment.model_dir({model = "/nowhere"}, {injected = true}), "/nowhere")
end)

t.test("running without the engine's primitives says which is missing", function()
  if rawget(_G, "policy") then return end  -- the engine has them: nothing to check
  t.raises(function() experiment.deps({bench = {}, train = {}}) end, "this engine has no 'policy' module")
end)

t.run()
