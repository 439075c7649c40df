-- Experiment 1 on a CUDA task (--task=cuda:NAME): the prompt is the task's CUDA prompt,
-- kernels come out of ```cuda blocks, are judged through cuda_eval's stand-in for the
-- benchmark and rewarded by their speed against libtorch's op (100 = par). Here the GPU is
-- a stand-in bench (its judge reads a label in the kernel); on a machine without a GPU the
-- real engine refuses the task with the driver's reason.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local cuda_tasks = require "engine.cuda_tasks"
local cuda_eval = require "method.cuda_eval"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local spec = cuda_tasks.get("softmax_rows")

-- The labelled kernel: the task's straightforward one with a label the stand-in judge reads.
local function labelled(label) return "/* " .. label .. " */\n" .. spec.straightforward end
local function fenced(code) return "Here is the kernel:\n```cuda\n" .. code .. "```\n" end

-- Answers in turn: a fast kernel, a slow one, a wrong one, one without the entry, prose.
local answers = {fenced(labelled("fast")), fenced(labelled("slow")), fenced(labelled("wrong")),
                 fenced('extern "C" __global__ void other(float *x) {}\n'), "I cannot do that."}

local function cuda_policy(seen) return fakes.answering_policy(answers, seen) end

-- A GPU's bench: libtorch's op takes 0.05 ms, a "fast" kernel 0.025, a "slow" one 0.1.
local function gpu_bench()
  local b = {judged = {}, yardsticks = 0, probes = 0}
  function b.cuda()
    b.probes = b.probes + 1
    return {available = true, reason = "", device = "Stand-in GPU", peak_fp32_gflops = 1e5, peak_gbps = 1e4}
  end
  function b.cuda_yardstick(reference, size)
    b.yardsticks = b.yardsticks + 1
    return {status = "ok", median_ms = 0.05, times_ms = {0.05, 0.05}, cov = 0.01, reference = reference}
  end
  function b.cuda_judge(src, launch, check)
    b.judged[#b.judged + 1] = {launch = launch, check = check}
    if not src:find("softmax_rows", 1, true) then
      return {status = "load_error", log = "kernel.cu defines no extern \"C\" __global__ function softmax_rows"}
    end
    local ms = src:find("/* fast */", 1, true) and 0.025 or 0.1
    local rec = {status = "ok", log = "", compile_ms = 20, times_ms = {ms, ms, ms}, median_ms = ms, cov = 0.02,
                 max_error = 1e-7, kernel_output = ms < 0.05 and "ok: 99999 GB/s\n" or ""}
    -- a wrong kernel that left a NaN: the judge's largest error is infinite
    if src:find("/* wrong */", 1, true) then rec.status, rec.max_error = "verification_error", math.huge end
    return rec
  end
  -- the warm child's judge: the same verdicts, each kernel marked as judged there
  function b.cuda_judge_batch(kernels, check)
    local out = {}
    for i, k in ipairs(kernels) do
      out[i] = b.cuda_judge(k.source, k.launch, check)
      b.judged[#b.judged].warm = true
    end
    return out
  end
  return b
end

local function parse(exp, name, extra)
  local argv = {[0] = name .. ".lua", "--model=fake-model", "--task=cuda:softmax_rows", "--task_size=test"}
  for _, o in ipairs(extra) do argv[#argv + 1] = o end
  return require("run.options").parse(argv, exp.spec)
end

local function metrics_of(dir)
  local out = {}
  for line in io.lines(dir .. "/metrics.jsonl") do out[#out + 1] = json.decode(line) end
  return out
end

t.test("experiment 1 on a CUDA task: its prompt, device code, rewards against libtorch's op", function()
  local out, seen, gpu = t.tmpdir(), {}, gpu_bench()
  local opts = parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--G=5", "--prompts_per_step=1",
                                           "--lr=0,5e-7", "--beta=0", "--profile=paper"})
  local summaries = exp1.run(opts, {policy = cuda_policy(seen), bench = gpu, train = fakes.train()})
  t.eq(#summaries, 2)
  t.contains(seen[1], spec.signature)
  t.contains(seen[1], "Stand-in GPU")
  t.contains(seen[1], "rows = 16")  -- the test size, stated
  t.ok(not seen[1]:find("matmul_optimized", 1, true), "no word of the CPU matmul")
  -- the judge ran each kernel with code at the task's launch for that size
  t.eq(#gpu.judged, 2 * (3 + 1))  -- per run three with the entry, then the best one re-measured
  t.eq(gpu.judged[1].launch.grid, {16})
  t.eq({gpu.judged[1].launch.warmup, gpu.judged[1].launch.calls}, {nil, nil})  -- the judge's own
  t.eq(gpu.judged[1].check.reference, "softmax_rows")
  local run = store.open(summaries[2].dir, {log_file = false})
  local got = {}
  for _, s in ipairs(run:samples{}) do got[#got + 1] = {s.status, s.reward} end
  t.eq(got, {{"ok", 200.0}, {"ok", 50.0}, {"verification_error", -10}, {"format_violation", -100},
             {"format_violation", -100}})
  t.contains(run:samples{}[4].extra.message, "softmax_rows")  -- the entry it lacks, named
  local first = run:samples{}[1]
  t.eq(first.extra.unit, cuda_eval.unit)
  t.near(first.extra.speed, 200.0, 1e-9)
  -- what a kernel printed is kept with its sample, never in its message; nothing when silent
  t.eq({first.extra.kernel_output, first.extra.message}, {"ok: 99999 GB/s\n", nil})
  t.eq(run:samples{}[2].extra.kernel_output, nil)
  t.eq(run:get("cuda_yardstick").median_ms, 0.05)
  t.eq(run:get("gpu").device, "Stand-in GPU")
  -- the sweep's other configuration divided by the same measurement of libtorch's op
  t.eq(gpu.yardsticks, 1)
  -- the GPU asked once before the sweep and once per run: each asking starts a child and
  -- the driver
  t.eq(gpu.probes, 1 + 2)
  local m = metrics_of(summaries[2].dir)
  t.near(m[#m].max_vs_yardstick, 2.0, 1e-9)  -- the best kernel, twice libtorch's speed
  -- the report: the GPU, libtorch's op and the best kernel against it, the kernel as CUDA
  local report = dofile(engine.scripts[1] .. "/report.lua")
  report.main({[0] = "report.lua", out})
  local md = assert(io.open(out .. "/report/report.md")):read("a")
  t.contains(md, "CUDA task `softmax_rows` on Stand-in GPU")
  t.contains(md, "| beta=0,lr=5e-07 | cols=100,rows=16 | 0.0500 ms | 0.0250 ms | 2.000 |")
  t.contains(md, "```cuda\n/* fast */")
  t.ok(not md:find("Vector ISA", 1, true), "no CPU ISA for a CUDA prompt")
  t.ok(sys.exists(out .. "/report/best_kernel.cu"), "the best kernel saved as .cu")
  -- the held-out comparison speaks of CPU tasks: a CUDA run is refused, by name
  local heldout = dofile(engine.scripts[1] .. "/heldout.lua")
  t.raises(function() heldout.compare(out, {}, {policy = cuda_policy({}), bench = gpu, train = fakes.train()}) end,
           "ran on the CUDA task cuda:softmax_rows: heldout.lua compares policies on CPU tasks only")
end)

t.test("the warm child judges every kernel by default; --cuda_child=fresh gives the same rewards", function()
  local function rewards(extra)
    local out, gpu = t.tmpdir(), gpu_bench()
    local args = {"--out=" .. out, "--steps=1", "--G=5", "--prompts_per_step=1", "--lr=0", "--beta=0", "--profile=paper"}
    for _, a in ipairs(extra) do args[#args + 1] = a end
    local summaries = exp1.run(parse(exp1, "experiment1", args), {policy = cuda_policy({}), bench = gpu,
                                                                   train = fakes.train()})
    local got, run = {}, store.open(summaries[1].dir, {log_file = false})
    for _, s in ipairs(run:samples{}) do got[#got + 1] = {s.status, s.reward} end
    run:close()
    local warm = 0
    for _, j in ipairs(gpu.judged) do if j.warm then warm = warm + 1 end end
    return got, warm, #gpu.judged, out
  end
  local fresh, fresh_warm, fresh_n = rewards({"--cuda_child=fresh"})
  local warm, warm_n, n, out = rewards({})
  t.eq(warm, fresh)
  t.eq({fresh_warm, warm_n, n}, {0, fresh_n, fresh_n})
  -- how the kernels are judged is not what is computed: a run resumes with either
  local again = exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=2", "--G=5", "--prompts_per_step=1",
                                                      "--lr=0", "--beta=0", "--profile=paper", "--resume",
                                                      "--cuda_child=fresh"}),
                         {policy = cuda_policy({}), bench = gpu_bench(), train = fakes.train()})
  t.eq(#metrics_of(again[1].dir), 2)
end)

t.test("a resumed CUDA run keeps the yardstick it started with", function()
  local out, gpu = t.tmpdir(), gpu_bench()
  local function run_to(steps, resume)
    local extra = {"--out=" .. out, "--steps=" .. steps, "--G=5", "--prompts_per_step=1", "--lr=0", "--beta=0",
                   "--profile=paper", "--warmup=1", "--runs=5"}
    if resume then extra[#extra + 1] = "--resume" end
    return exp1.run(parse(exp1, "experiment1", extra), {policy = cuda_policy({}), bench = gpu, train = fakes.train()})
  end
  run_to(1)
  t.eq(gpu.yardsticks, 1)
  t.eq({gpu.judged[1].launch.warmup, gpu.judged[1].launch.calls}, {1, 5})  -- --warmup and --runs given
  local summaries = run_to(2, true)
  t.eq(gpu.yardsticks, 1)  -- not measured again: the run's rewards keep one scale
  t.eq(#metrics_of(summaries[1].dir), 2)
end)

t.test("a CUDA task is refused where it cannot run, before any run directory", function()
  local out = t.tmpdir() .. "/runs"
  local opts = parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", "--G=2", "--profile=paper"})
  local machine = bench.cuda()
  if machine.available then
    -- a GPU machine: the engine's bench passes the check
    t.eq(cuda_eval.gpu(bench).device, machine.device)
  else
    local err = t.raises(function()
      exp1.run(opts, {policy = cuda_policy({}), bench = bench, train = fakes.train()})
    end, "--task=cuda:softmax_rows: CUDA tasks are unavailable on this machine: ")
    t.contains(tostring(err), machine.reason)
    t.ok(not sys.exists(out), "no run directory was made")
  end
  local no_cuda = {cuda = function() return {available = false, reason = "no GPU in this test"} end}
  t.raises(function() exp1.run(opts, {policy = cuda_policy({}), bench = no_cuda, train = fakes.train()}) end,
           "unavailable on this machine: no GPU in this test")
end)

t.test("CUDA task options: the task, its size and the reward are checked", function()
  t.raises(function() parse(exp1, "experiment1", {"--task=cuda:nope"}) end, "no CUDA task 'nope' (have: ")
  t.raises(function() parse(exp1, "experiment1", {"--task_size=huge"}) end,
           "--task_size=huge: softmax_rows has sizes heldout, test, train")
  t.raises(function() parse(exp1, "experiment1", {"--reward=kernelcompare"}) end, "a CUDA task takes gflops")
  t.eq(parse(exp1, "experiment1", {"--task_size="}).task_size, "train")
  t.raises(function() parse(exp2, "experiment2", {"--out=" .. t.tmpdir()}) end,
           "--task=cuda:softmax_rows: CUDA tasks run in experiment1.lua")
  local model_check = dofile(engine.scripts[1] .. "/model_check.lua")
  t.raises(function() model_check.run({task = "cuda:softmax_rows", task_size = ""}) end, "CUDA tasks run in experiment1.lua")
end)

t.test("without --model a CUDA task's run takes the shipped CUDA-capable model", function()
  local wiring = require "method.wiring"
  t.eq(wiring.model_dir({task = "cuda:softmax_rows"}, {injected = false}), engine.models .. "/small-cuda")
  t.eq(wiring.model_dir({task = "axpy"}, {injected = false}), wiring.default_model)
  t.eq(wiring.model_dir({task = "cuda:softmax_rows", model = wiring.default_model}, {injected = false}),
       wiring.default_model)
end)

t.test("the judge's statuses map onto Eq. 3's; an unknown one is an error, not a penalty", function()
  local b = gpu_bench()
  local cb = cuda_eval.bench(b, "softmax_rows", "test")
  local r = cb.evaluate_batch({labelled("fast"), 'extern "C" __global__ void x() {}'})
  t.eq(r[1].status, "ok")
  t.near(r[1].speed, 200.0, 1e-9)
  t.near(r[1].median, 0.025e-3, 1e-15)  -- seconds, as the CPU benchmark's
  t.eq(r[2].status, "compile_error")
  t.eq(r[2].cuda_status, "load_error")
  t.eq(r[2].gflops, nil)
  function b.cuda_judge() return {status = "lost_gpu", log = "gone"} end
  t.raises(function() cb.evaluate_batch({labelled("fast")}) end, "the CUDA judge answered 'lost_gpu'")
  function b.cuda_yardstick() return {status = "runtime_error", log = "no memory"} end
  t.raises(function() cuda_eval.bench(b, "softmax_rows", "test") end, "libtorch's softmax_rows could not be timed")
end)

t.run()
