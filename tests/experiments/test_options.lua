-- The experiments' command lines: the paper's defaults, the sweeps and their subsets,
-- the small profile, and the errors a user meets first.
local t = require "engine.test"
local args = require "engine.args"
local checks = require "run.checks"
local cli = require "core.cli"
local options = require "run.options"
local wiring = require "method.wiring"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")

local function parse(exp, argv)
  argv[0] = "experiment.lua"
  return options.parse(argv, exp.spec)
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

t.test("benchmark options are checked by the benchmark's rules before anything is made", function()
  local o = parse(exp1, {"--model=/m", "--max_runs=20", "--cov_target=0.1"})
  t.eq({o.max_runs, o.cov_target}, {20, 0.1})
  for _, case in ipairs{{{"--max_runs=70"}, "at most 64"}, {{"--warmup=60", "--runs=5"}, "at most 64"},
                        {{"--timeout=5000"}, "timeout must be"}} do
    local argv = {"--model=/m"}
    for _, a in ipairs(case[1]) do argv[#argv + 1] = a end
    local ok, err = pcall(parse, exp1, argv)
    t.ok(not ok and cli.is_user_error(err), "a user's mistake: " .. tostring(err))
    t.contains(tostring(err), case[2])
    t.contains(tostring(err), "--warmup=")
  end
end)

t.test("the trainer gets the paper's GRPO settings, LoRA only when asked", function()
  local o = parse(exp1, {"--model=/m"})
  t.eq(wiring.train_opts(o, {lr = 5e-7, beta = 0.01}),
       {lr = 5e-7, beta = 0.01, clip = 0.2, loss = "grpo", num_iterations = 1, scale_rewards = "group"})
  local o2 = parse(exp2, {"--model=/m", "--lora_r=32", "--micro_batch=8", "--scale_rewards=batch"})
  t.eq(wiring.train_opts(o2, {lr = 5e-7}),
       {lr = 5e-7, beta = 0.0, clip = 0.2, loss = "grpo", num_iterations = 1, micro_batch = 8,
        scale_rewards = "batch", lora = {r = 32, alpha = 64.0, dropout = 0.1}})
  local _, err = require("engine.args").try_parse({[0] = "x", "--model=/m", "--scale_rewards=std"}, exp2.spec)
  t.contains(tostring(err), "--scale_rewards: 'std' is not one of: group, batch, none")
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
  local o2 = parse(exp2, {})
  t.eq(o2.profile, "small")
  -- the settings under which SQD's learning showed (docs/history.md)
  t.eq({o2.iterations, o2.lr, o2.update_groups}, {12, {0.0, 1e-4}, 4})
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
  local shipped = wiring.default_model
  wiring.default_model = t.tmpdir() .. "/small"
  local ok, err = pcall(wiring.model_dir, {}, {injected = false})
  wiring.default_model = shipped
  t.ok(not ok)
  t.contains(tostring(err), "/small is missing: restore it")
  t.contains(tostring(err), "pass --model=DIR")
  t.raises(function() wiring.model_dir({model = "/nowhere"}, {injected = false}) end,
           "--model=/nowhere: no Hugging Face checkpoint there")
  t.eq(wiring.model_dir({model = "/nowhere"}, {injected = true}), "/nowhere")
end)

-- Impossible values are refused by the parser, with one line naming the option, before
-- a script makes anything.
t.test("impossible values are refused, one line naming the option", function()
  local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
  local model_check = dofile(engine.scripts[1] .. "/model_check.lua")
  local function refused(spec, argv, text)
    local o, err = args.try_parse(argv, spec)
    t.eq(o, nil, table.concat(argv, " ") .. " was accepted")
    t.contains(err, text)
    t.ok(not err:find("\n"), "one line: " .. err)
  end
  for _, case in ipairs{
    {{"--steps=-1"}, "--steps must be at least 1, got -1"},
    {{"--steps=0"}, "--steps must be at least 1, got 0"},
    {{"--G=0"}, "--G must be at least 1"},
    {{"--timeout=-1"}, "--timeout must be greater than 0"},
    {{"--timeout=0"}, "--timeout must be greater than 0"},
    {{"--size=0"}, "--size must be at least 1"},
    {{"--runs=0"}, "--runs must be at least 1"},
    {{"--max_tokens=0"}, "--max_tokens must be at least 1"},
    {{"--top_p=1.5"}, "--top_p must be at most 1"},
    {{"--prompts_per_step=0"}, "--prompts_per_step must be at least 1"},
    {{"--lr=5e-7,-1e-7"}, "--lr: each value must be at least 0"},
    {{"--beta=-0.1"}, "--beta: each value must be at least 0"},
    {{"--num_iterations=0"}, "--num_iterations must be at least 1"},
    {{"--device=gpu"}, "--device: expected auto, cpu, cuda or cuda:N, got 'gpu'"},
    {{"--detector=magic"}, "--detector: expected regex, features or auto"},
    {{"--reward=speed"}, "--reward: no reward scheme 'speed'"},
  } do
    refused(exp1.spec, {"--model=/m", table.unpack(case[1])}, case[2])
  end
  refused(exp1.spec, {"--steps=0"}, "--steps must be at least 1")  -- the small profile too
  refused(exp2.spec, {"--model=/m", "--iterations=0"}, "--iterations must be at least 1")
  refused(exp2.spec, {"--model=/m", "--pool_size=-1"}, "--pool_size must be at least 0")
  refused(exp2.spec, {"--model=/m", "--G=-4"}, "--G must be at least 1")
  refused(pretrain.spec, {"--steps=-1"}, "--steps must be at least 1")
  refused(pretrain.spec, {"--batch=0"}, "--batch must be at least 1")
  refused(pretrain.spec, {"--heads=3"}, "--hidden=256 must be a multiple of --heads=3")
  refused(pretrain.spec, {"--kv_heads=3"}, "--heads=4 must be a multiple of --kv_heads=3")
  refused(model_check.spec, {"--stage=0"}, "--stage must be at least 1")
  refused(model_check.spec, {"--n=0"}, "--n must be at least 1")
  -- the defaults and the profiles pass their own checks
  for _, spec in ipairs{exp1.spec, exp2.spec, pretrain.spec, model_check.spec} do
    t.ok(args.try_parse({"--model=/m"}, spec) or args.try_parse({}, spec))
  end
  t.ok(args.try_parse({"--profile=small"}, exp1.spec))
  t.ok(args.try_parse({"--profile=small"}, exp2.spec))
end)

t.test("--device=auto is the default: CUDA when the policy module sees it, else the CPU", function()
  local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
  local model_check = dofile(engine.scripts[1] .. "/model_check.lua")
  t.eq(parse(exp1, {"--model=/m"}).device, "auto")
  t.eq(parse(exp2, {}).device, "auto")
  t.eq(assert(args.try_parse({}, pretrain.spec)).device, "auto")
  t.eq(assert(args.try_parse({}, model_check.spec)).device, "auto")
  local gpu = {cuda_available = function() return true end}
  local cpu = {cuda_available = function() return false end}
  t.eq(wiring.device("auto", gpu), "cuda")
  t.eq(wiring.device("auto", cpu), "cpu")
  t.eq(wiring.device("auto", {}), "cpu", "a policy module that cannot tell")
  t.eq(wiring.device("cpu", gpu), "cpu")
  t.eq(wiring.device("cuda:1", gpu), "cuda:1")
  t.raises(function() wiring.device("cuda", cpu) end, "--device=cuda: this engine sees no CUDA device")
  if rawget(_G, "policy") then
    t.eq(wiring.device("auto"), policy.cuda_available() and "cuda" or "cpu")
  end
  -- the policy is loaded on the resolved device
  local seen
  local deps = {injected = true, policy = {cuda_available = function() return true end,
                                           load = function(dir, o) seen = o; return {} end}}
  wiring.load_policy({model = "/m", device = "auto", dtype = "bf16"}, deps)
  t.eq(seen, {device = "cuda", dtype = "bf16"})
end)

t.test("a primitive's error the user can act on becomes one line without a traceback", function()
  local ok, err = pcall(cli.try, "cannot resume runs/x", function()
    error("train: corrupt runs/x/trainer.json\nframe #0: c10::Error", 0)
  end)
  t.ok(not ok)
  t.ok(cli.is_user_error(err), "a user's error")
  t.eq(tostring(err), "cannot resume runs/x: train: corrupt runs/x/trainer.json")
  t.eq(select(2, cli.try("x", function(a, b) return a, b end, 1, 2)), 2)
  local _, user = pcall(cli.try, "outer", function() cli.fail("inner") end)
  t.eq(tostring(user), "inner", "a user's error passes unchanged")
end)

-- A /proc/meminfo of a known machine, so that the bounds below do not depend on this one.
local function with_meminfo(total_mb, available_mb, fn)
  local file = t.tmpdir() .. "/meminfo"
  local f = assert(io.open(file, "w"))
  f:write(string.format("MemTotal:       %d kB\nMemFree:        1 kB\nMemAvailable:   %d kB\n",
                        total_mb * 1024, available_mb * 1024))
  f:close()
  local real = checks.meminfo_file
  checks.meminfo_file = file
  local ok, err = pcall(fn)
  checks.meminfo_file = real
  if not ok then error(err, 0) end
end

t.test("--threads and --size are bounded by the machine that measures the kernels", function()
  checks.check_threads({threads = 4}, {cores = 4})
  t.raises(function() checks.check_threads({threads = 5}, {cores = 4}) end,
           "--threads=5: at most 4, the cores of the machine that times the kernels")
  with_meminfo(65536, 65536, function()
    t.eq(checks.meminfo("MemAvailable"), 65536 * 2^20)
    -- the reference's 25 calls of 4 matrices of size^2 doubles within 4096 MB: 2317 fits
    local o = {warmup = 1, runs = 3, max_runs = 10, size = 2317}
    checks.check_size(o, true)
    o.size = 2318
    t.raises(function() checks.check_size(o, true) end,
             "--size=2318: at most 2317 here: 25 calls (the OpenBLAS reference's")
    checks.check_size(o, false)  -- the experiment's own 11 calls hold it
    o.size, o.warmup, o.max_runs = 3000, 4, 60
    t.raises(function() checks.check_size(o, false) end, "64 calls (--warmup + --max_runs)")
  end)
  with_meminfo(2048, 2048, function()  -- a small machine: half its memory
    t.raises(function() checks.check_size({warmup = 1, runs = 3, max_runs = 10, size = 1200}, true) end,
             "--size=1200: at most 1158 here")
    t.raises(function() checks.check_size({warmup = 1, runs = 3, max_runs = 10, size = 1200}, true) end,
             "(half of MemTotal)")
  end)
  -- parsed: refused as the user's mistake, on one line
  local ok, err = pcall(parse, exp1, {"--model=/m", "--size=20000"})
  t.ok(not ok and cli.is_user_error(err), tostring(err))
  t.contains(tostring(err), "--size=20000: at most ")
  t.ok(not tostring(err):find("\n"), "one line: " .. tostring(err))
  if rawget(_G, "bench") then
    local cores = bench.machine().cores
    t.eq(parse(exp2, {"--threads=" .. cores}).threads, cores)
    t.raises(function() parse(exp2, {"--threads=" .. (cores + 1)}) end,
             string.format("--threads=%d: at most %d", cores + 1, cores))
  end
end)

t.test("--G is bounded by the memory sampling needs at least", function()
  local small = json.read(wiring.default_model .. "/config.json")
  -- the key/value cache of 4 layers x 2 heads x 64 (fp32) for 512 tokens, the mask, the logits
  local row = 2 * 4 * 2 * 64 * 512 * 4 + 512 * 4 + 2 * 4096 * 4
  t.eq({checks.sampling_bytes(small, {G = 16, max_tokens = 512, dtype = "fp32"}, 2)},
       {16 * 2 * row, row})
  local bf16 = checks.sampling_bytes(small, {G = 16, max_tokens = 512, dtype = "bf16"}, 2)
  t.ok(bf16 < 16 * 2 * row, "bf16 halves the cache")
  t.eq(checks.sampling_bytes({model_type = "qwen2"}, {G = 1, max_tokens = 1, dtype = "fp32"}, 1), nil)
  with_meminfo(4096, 1024, function()
    local o = {G = 16, max_tokens = 512, dtype = "fp32", prompts_per_step = 2}
    checks.check_memory(o, wiring.default_model, "cpu")
    o.G = 1000
    t.raises(function() checks.check_memory(o, wiring.default_model, "cpu") end,
             "--G=1000: 1000 completions x 2 prompt(s) of up to 512 tokens need at least 4066 MB")
    t.raises(function() checks.check_memory(o, wiring.default_model, "cpu") end,
             "more than the 1024 MB free (MemAvailable): lower --G (at most 251) or --max_tokens")
    checks.check_memory(o, wiring.default_model, "cuda")  -- the GPU's memory: not known
  end)
end)

t.test("a primitive's message loses the bytes of a damaged file it quotes", function()
  t.eq(cli.clean_message("train: corrupt x/trainer.json: [json.exception.parse_error.101] parse "
                                .. "error at line 1, column 3: invalid literal; last read: '\"ab\1\255'"
                                .. "; expected end of input\nframe #0"),
       "train: corrupt x/trainer.json: parse error at line 1, column 3: invalid literal")
  t.eq(cli.clean_message("bad name '" .. ("x"):rep(100) .. "' in y"),
       "bad name '" .. ("x"):rep(57) .. "...' in y")
  t.eq(cli.clean_message("a\1b \255\254 c"), "a?b ?? c")
  t.eq(cli.clean_message("runs/café: gone"), "runs/café: gone", "UTF-8 is text")
  local ok, err = pcall(cli.try, "cannot resume r", function()
    error("json: cannot parse r/trainer.json: [json.exception.parse_error.101] parse error; last read: '"
          .. ("\255"):rep(500), 0)
  end)
  t.ok(not ok)
  t.eq(tostring(err), "cannot resume r: json: cannot parse r/trainer.json: parse error")
end)

-- cli.main in a child engine: what reaches the terminal.
t.test("main prints a user's mistake as one line, a script's bug with its traceback", function()
  local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
  local script = t.tmpdir() .. "/main.lua"
  local f = assert(io.open(script, "w"))
  f:write([[
local cli = require "core.cli"
cli.main("demo.lua", function(argv)
  if argv[1] == "user" then cli.fail("--model=/x: no Hugging Face checkpoint there") end
  local t = nil
  return t.field  -- a bug in a script being edited
end, arg)
]])
  f:close()
  local function run(...)
    local pipe = io.popen(string.format("%q %q %s 2>&1", engine_exe, script, table.concat({...}, " ")))
    local out = pipe:read("a")
    local ok, _, code = pipe:close()
    return out, ok, code
  end
  local out, ok, code = run("user")
  t.ok(not ok and code == 1, "status 1")
  t.eq(out, "demo.lua: --model=/x: no Hugging Face checkpoint there\n")
  out = run("user", "--debug")
  t.contains(out, "demo.lua: --model=/x: no Hugging Face checkpoint there\nstack traceback:")
  out = run("bug")
  t.contains(out, "attempt to index a nil value")
  t.contains(out, "stack traceback:")
end)

t.test("running without the engine's primitives says which is missing", function()
  if rawget(_G, "policy") then return end  -- the engine has them: nothing to check
  t.raises(function() wiring.deps({bench = {}, train = {}}) end, "this engine has no 'policy' module")
end)

t.run()
