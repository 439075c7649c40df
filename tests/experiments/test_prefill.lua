-- --prefill: every prompt ends with the answer begun (a fence, the headers, the task's
-- prototype line), the policy writes the body, and the judge reads the two together. The
-- policy is a stand-in that answers with the body of a task's test kernel alone
-- (tests/bench/tasks): judged with the beginning it verifies, judged alone it has no
-- function to extract.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local prompts = require "method.prompts"

local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")
local exp3 = dofile(engine.scripts[1] .. "/experiment3.lua")
local model_check = dofile(engine.scripts[1] .. "/model_check.lua")

local TASKS = {"axpy", "dot", "matmul"}

-- The body of a task's plain test kernel, after its prototype's brace, and the fence's end.
local function body(name)
  local code = dofile(here .. "/../bench/tasks/" .. name .. ".lua").plain
  return assert(code:match("^[^\n]*{\n(.*)$"), name) .. "```\n"
end

-- Answers each prompt with the body of the task whose answer it begins; `seen` gets the
-- task of each prompt, in order.
local function body_policy(seen)
  return fakes.answering_policy(function(prompt)
    for _, name in ipairs(TASKS) do
      local begun = prompts.answer_start(name)
      if prompt:sub(-#begun) == begun then
        seen[#seen + 1] = name
        return {body(name)}
      end
    end
    seen[#seen + 1] = "none"
    return {body("axpy")}
  end, {})
end

local function parse(exp, name, extra)
  local argv = {[0] = name .. ".lua", "--model=fake-model", "--task_size=test", "--threads=1", "--runs=1",
                "--max_runs=1", "--warmup=0", "--opt=O2", "--profile=" .. (name == "experiment3" and "full" or "paper")}
  for _, o in ipairs(extra) do argv[#argv + 1] = o end
  return require("run.options").parse(argv, exp.spec)
end

local function samples(dir)
  local run = store.open(dir, {log_file = false})
  local out = run:samples{}
  run:close()
  return out
end

t.test("the answer's beginning is a fence, the headers and the task's prototype line", function()
  t.eq(prompts.answer_start("axpy"),
       "```c\n#include <immintrin.h>\n#include <omp.h>\n\nvoid axpy(int n, double alpha, const double *x, double *y) {\n")
  t.eq(prompts.answer_start(nil), prompts.answer_start("matmul"))
  t.contains(prompts.answer_start("matmul"), "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n")
  t.eq(model_check.answer_start, prompts.answer_start, "model_check --prefill begins answers as the experiments do")
end)

t.test("experiment 1 --prefill: the prompt ends with the beginning, the judge reads it and the body", function()
  local out, seen = t.tmpdir(), {}
  local train = fakes.train()
  local opts = parse(exp1, "experiment1", {"--task=axpy", "--out=" .. out, "--steps=1", "--G=2",
                                           "--prompts_per_step=1", "--lr=5e-7", "--beta=0", "--prefill"})
  local summaries = exp1.run(opts, {policy = body_policy(seen), bench = bench, train = train})
  t.eq(seen, {"axpy"})
  local begun = prompts.answer_start("axpy")
  local rows = samples(summaries[1].dir)
  t.eq(#rows, 2)
  t.eq(rows[1].prompt:sub(-#begun), begun, "the stored prompt is the one sampled from")
  for _, s in ipairs(rows) do
    t.eq(s.status, "ok", s.extra.message)
    t.eq(s.completion, begun .. body("axpy"), "what was judged: the beginning and the body")
  end
  -- without --prefill the same answers are bodies with no function around them
  local out2, seen2 = t.tmpdir(), {}
  opts = parse(exp1, "experiment1", {"--task=axpy", "--out=" .. out2, "--steps=1", "--G=2",
                                     "--prompts_per_step=1", "--lr=0", "--beta=0"})
  local plain = exp1.run(opts, {policy = body_policy(seen2), bench = bench, train = fakes.train()})
  t.eq(seen2, {"none"})
  rows = samples(plain[1].dir)
  t.eq(#rows, 2)
  for _, s in ipairs(rows) do t.eq(s.status, "format_violation") end
end)

t.test("a mixture --prefill: each group's answer begun with its own task's prototype", function()
  local out, seen = t.tmpdir(), {}
  local opts = parse(exp1, "experiment1", {"--tasks=axpy,dot,matmul", "--out=" .. out, "--steps=1", "--G=2",
                                           "--prompts_per_step=3", "--lr=5e-7", "--beta=0", "--prefill"})
  local summaries = exp1.run(opts, {policy = body_policy(seen), bench = bench, train = fakes.train()})
  t.eq(seen, TASKS)
  local by_task = {}
  for _, s in ipairs(samples(summaries[1].dir)) do
    t.eq(s.status, "ok", s.extra.message)
    t.eq(s.completion:sub(1, #prompts.answer_start(s.extra.task)), prompts.answer_start(s.extra.task))
    by_task[s.extra.task] = (by_task[s.extra.task] or 0) + 1
  end
  t.eq(by_task, {axpy = 2, dot = 2, matmul = 2})
end)

t.test("experiments 2 and 3 --prefill sample and judge the same way", function()
  local out, seen = t.tmpdir(), {}
  local opts = parse(exp2, "experiment2", {"--task=axpy", "--out=" .. out, "--iterations=1", "--G=2", "--lr=0",
                                           "--prefill"})
  local summaries = exp2.run(opts, {policy = body_policy(seen), bench = bench, train = fakes.train()})
  t.ok(#seen > 0)
  local seed = samples(summaries[1].dir)[1]
  t.eq(seed.status, "ok", "the seed kernel is judged whole, not after a beginning")
  for _, name in ipairs(seen) do t.eq(name, "axpy") end
  local judged = 0
  for _, s in ipairs(samples(summaries[1].dir)) do
    if s.iteration and s.iteration > 0 then
      t.eq(s.status, "ok", s.extra.message)
      judged = judged + 1
    end
  end
  t.ok(judged > 0, "SQD's groups were judged")

  out, seen = t.tmpdir(), {}
  opts = parse(exp3, "experiment3", {"--task=axpy", "--out=" .. out, "--steps=1", "--G=2", "--prompts_per_step=1",
                                     "--lr=0", "--turns=2", "--prefill"})
  summaries = exp3.run(opts, {policy = body_policy(seen), bench = bench, train = fakes.train()})
  t.ok(#seen >= 2, "both turns sampled")
  for _, name in ipairs(seen) do t.eq(name, "axpy", "every turn's prompt ends with the beginning") end
end)

t.test("--prefill is refused for a CUDA task, whose answer has no C prototype", function()
  local ok, err = pcall(parse, exp1, "experiment1", {"--task=cuda:vector_add", "--prefill", "--out=" .. t.tmpdir()})
  t.ok(not ok)
  t.contains(tostring(err), "--prefill")
end)

t.run()
