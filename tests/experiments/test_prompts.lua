-- The prompts: the task, the stage rules, the eight fixed prompts and ChatML.
local t = require "engine.test"
local prompts = require "prompts"
local extract = require "extract"
local stages = require "stages"

local task = {M = 256, N = 128, K = 64, opt = "O0"}

t.test("the task states the signature, the sizes and the compiler flags", function()
  local text = prompts.task_text(task)
  t.contains(text, "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)")
  t.contains(text, "M = 256, N = 128, K = 64")
  t.contains(text, "-O0 -march=native -fopenmp")
  t.contains(text, "row-major")
  t.contains(prompts.task_text{}, "M = 256, N = 256, K = 256")
  t.contains(prompts.task_text{threads = 16}, "16 cores")
end)

t.test("experiment 1: eight distinct prompts, each asking for all five techniques", function()
  local fixed = prompts.fixed(task)
  t.eq(#fixed, 8)
  local seen = {}
  for i, msgs in ipairs(fixed) do
    t.eq(msgs[1].role, "system")
    t.eq(msgs[2].role, "user")
    local text = msgs[2].content:lower()
    for _, word in ipairs{"register", "cache", "avx%-512", "openmp", "prefetch"} do
      t.ok(text:find(word), "prompt " .. i .. " asks for " .. word)
    end
    t.ok(not seen[text], "prompt " .. i .. " differs from the others")
    seen[text] = true
  end
end)

t.test("stage rules list what is allowed and what is not", function()
  t.contains(prompts.stage_rules(1), "Stage 1 of 6: use plain C only")
  t.contains(prompts.stage_rules(1), "software prefetching")
  local three = prompts.stage_rules(3)
  t.contains(three, "you may use register blocking, cache blocking.")
  t.contains(three, "Do not use: AVX-512 SIMD intrinsics, OpenMP parallelisation, software prefetching.")
  t.ok(not prompts.stage_rules(6):find("Do not use"), "stage 6 forbids nothing")
  local write = prompts.write(2, task)[2].content
  t.contains(write, "Stage 2 of 6")
  t.contains(write, "```c code block")
end)

t.test("advance, improve and repair carry the kernel and the instruction", function()
  local code = prompts.seed_kernel
  local adv = prompts.advance(code, 4, task)[2].content
  t.contains(adv, "Stage 5 of 6")
  t.contains(adv, "add OpenMP parallelisation")
  t.contains(adv, "sum += A[i * K + k] * B[k * N + j];")
  t.eq(prompts.advance(code, 6, task), prompts.improve(code, 6, task), "nothing beyond stage 6")
  t.contains(prompts.improve(code, 2, task)[2].content, "staying within the stage's rules")
  local rep = prompts.repair(code, 2, "segmentation fault (SIGSEGV)", task)[2].content
  t.contains(rep, "segmentation fault (SIGSEGV)")
  t.contains(prompts.repair(code, 2, nil, task)[2].content, "(no message)")
end)

t.test("the seed kernel is a valid stage-1 kernel", function()
  local code = extract.kernel(prompts.seed_kernel)
  t.ok(code, "the seed extracts")
  t.eq(stages.check(1, code).ok, true)
end)

t.test("ChatML rendering", function()
  local text = prompts.render{{role = "system", content = "S"}, {role = "user", content = "U"}}
  t.eq(text, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n")
  t.raises(function() prompts.render{{role = "tool", content = "x"}} end, "unknown role 'tool'")
end)

t.run()
