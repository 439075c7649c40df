-- The shipped default model (models/small) with the engine's real primitives: what it
-- writes for the stage-6 prompt, and short versions of both experiments run as a user
-- runs them, with no --model (the small profile), to their reports.
local t = require "engine.test"
local wiring = require "method.wiring"
local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local model_check = dofile(engine.scripts[1] .. "/model_check.lua")

-- Runs `engine ARGS`, ARGS being string.format(fmt, ...); it must succeed.
local function engine_ok(fmt, ...)
  local pipe = io.popen(string.format("%q " .. fmt, engine_exe, ...) .. " 2>&1")
  local log = pipe:read("a")
  t.ok(pipe:close(), log)
end

t.test("the default model is shipped", function()
  t.ok(sys.exists(wiring.default_model .. "/config.json"), wiring.default_model)
  t.ok(sys.exists(wiring.default_model .. "/tokenizer.json"))
end)

t.test("it writes varied kernels that mostly compile and pass verification", function()
  local args = require "engine.args"
  local opts = args.parse({[0] = "model_check.lua", "--n=24", "--runs=1", "--seed=3"},
                          model_check.spec)
  local f = model_check.run(opts)
  t.ok(f.compile_rate >= 0.6, string.format("compile rate %.2f", f.compile_rate))
  t.ok(f.verify_rate >= 0.4, string.format("verify rate %.2f", f.verify_rate))
  t.ok(f.verified_combinations >= 4, "technique combinations " .. f.verified_combinations)
  t.ok(f.top_text_share <= 0.1, "top text share " .. f.top_text_share)
  -- it writes for the machine it runs on: few kernels use vectors wider than it has
  t.ok(f.beyond_isa <= 0.15 * f.samples, string.format("%d of %d kernels wider than %s", f.beyond_isa,
                                                       f.samples, f.isa))
end)

t.test("experiment 1 runs on it with and without learning, to a report", function()
  local out = t.tmpdir() .. "/e1"
  engine_ok("experiment1.lua --out=%q --steps=2 --G=4 --seeds=1 --prompts_per_step=1 --runs=1", out)
  local base = store.open(out .. "/beta=0,lr=0,opt=O3")
  local learn = store.open(out .. "/beta=0,lr=0.0003,opt=O3")
  t.eq(base:get("step"), 2)
  t.eq(learn:get("step"), 2)
  t.eq(base:get("updates"), nil)
  t.eq(learn:get("updates"), 2)
  t.eq(base:count(), 8)
  t.ok(#learn:samples{status = "ok"} > 0, "some kernels pass verification")
  -- the same seeds: both configurations sample the same first step
  t.eq(base:samples{iteration = 1}[1].completion, learn:samples{iteration = 1}[1].completion)
  base:close()
  learn:close()
  engine_ok("report.lua %q", out)
  t.ok(sys.exists(out .. "/report/report.md"))
end)

t.test("experiment 2 runs on it and fills its stage pools", function()
  local out = t.tmpdir() .. "/e2"
  engine_ok("experiment2.lua --out=%q --iterations=1 --G=4 --seeds=1 --runs=1 --configs=lr=0", out)
  local run = store.open(out .. "/lr=0,opt=O3")
  t.eq(run:get("iteration"), 1)
  local filled = 0
  for _, ids in ipairs(run:get("pool", {})) do
    if #ids > 0 then filled = filled + 1 end
  end
  t.ok(filled >= 1, "pools filled: " .. filled)
  run:close()
end)

t.run()
