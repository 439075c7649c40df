-- The prompts: the task, the stage rules, the eight fixed prompts and ChatML.
local t = require "engine.test"
local prompts = require "method.prompts"
local extract = require "method.extract"
local stages = require "method.stages"

local task = {M = 256, N = 128, K = 64, opt = "O0"}

-- The machine's vector ISA: "avx512" here natively, "avx2" under ENGINE_TARGET=x86-64-v3
-- (CTest runs this file both ways). Prompts without task.isa name it.
local simd = bench.machine().simd
local simd_name = stages.isa(simd).name

-- The paper's eight emphases, word for word: --isa=avx512 must reproduce them.
local paper_emphases = {
  "Use every technique that helps: register blocking, cache blocking, AVX-512 SIMD intrinsics, OpenMP parallelisation and software prefetching.",
  "Apply register blocking and cache blocking, vectorise with AVX-512 intrinsics, parallelise with OpenMP and add software prefetching.",
  "Aim for the highest GFLOPS: combine OpenMP threads, AVX-512 FMA intrinsics, a register-blocked micro-kernel, cache blocking and prefetching.",
  "Structure the kernel like an optimised BLAS: cache blocks for L1/L2, a register-blocked AVX-512 micro-kernel, OpenMP over the outer blocks, prefetching.",
  "Make the inner loop an AVX-512 micro-kernel with several accumulators (register blocking), tile the loops for the caches, parallelise with OpenMP and prefetch.",
  "Optimise for a many-core CPU with AVX-512: OpenMP parallelisation, cache blocking, register blocking, SIMD intrinsics and software prefetching.",
  "Write a fast kernel that uses register blocking, cache blocking, AVX-512 SIMD, OpenMP and _mm_prefetch, keeping it correct for the given sizes.",
  "Use all five techniques -- register blocking, cache blocking, AVX-512 SIMD, OpenMP and prefetching -- and keep the code simple enough to be correct.",
}
local paper_task = table.concat({
  "Write a C function with exactly this signature:", "",
  "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)", "",
  "It computes C = A x B for row-major double-precision matrices: A is M x K, B is K x N and C is M x N. C must be fully overwritten (do not assume it holds zeros).",
  "The kernel is benchmarked with M = 256, N = 128, K = 64. It is compiled with -O0 -march=native -fopenmp and runs on all cores of the node.",
  "Do not call BLAS or any other library routine for the multiplication; <immintrin.h>, <omp.h>, <stdlib.h> and <string.h> may be used.",
}, "\n")

local function with_isa(isa)
  local t2 = {}
  for k, v in pairs(task) do t2[k] = v end
  t2.isa = isa
  return t2
end

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
    for _, word in ipairs{"register", "cache", simd_name:lower():gsub("%p", "%%%0"), "openmp", "prefetch"} do
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
  t.contains(three, "Do not use: " .. simd_name .. " SIMD intrinsics, OpenMP parallelisation, software prefetching.")
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

t.test("the prompts name the machine's vector ISA unless the task names one", function()
  t.eq(prompts.isa("auto"), simd)
  t.eq(prompts.isa(nil), simd)
  t.eq(prompts.machine_isa(), simd)
  t.eq(prompts.isa("avx2"), "avx2")
  t.eq(prompts.isa("avx512"), "avx512")
  t.raises(function() prompts.isa("neon") end, "unknown vector ISA 'neon'")
  -- a stand-in bench that reports an ISA decides; one that reports none defers to the engine's
  t.eq(prompts.isa("auto", {machine = function() return {simd = "avx2"} end}), "avx2")
  t.eq(prompts.isa("auto", {machine = function() return {cores = 2} end}), simd)
  t.eq(prompts.fixed(task), prompts.fixed(with_isa(simd)))
  t.eq(prompts.write(4, task), prompts.write(4, with_isa(simd)))
  t.contains(prompts.stage_rules(4), simd_name .. " SIMD intrinsics")
  if simd == "avx512" then
    t.ok(not prompts.task_text(task):find("AVX2"), "no ISA note on an AVX-512 machine")
  else
    t.contains(prompts.task_text(task), "not AVX-512")
    t.ok(not prompts.write(6, task)[2].content:find("AVX-512 SIMD"), "no AVX-512 asked for without it")
  end
end)

t.test("--isa=avx512 gives the paper's prompts word for word", function()
  local t5 = with_isa("avx512")
  t.eq(prompts.emphases("avx512"), paper_emphases)
  t.eq(prompts.fixed_emphases, paper_emphases)
  t.eq(prompts.task_text(t5), paper_task)
  local fixed = prompts.fixed(t5)
  for i = 1, 8 do
    t.eq(fixed[i][2].content, paper_task .. "\n\n" .. paper_emphases[i]
         .. "\n\nAnswer with the complete C code in one ```c code block.")
  end
  t.eq(prompts.stage_rules(3, "avx512"), "Stage 3 of 6: you may use register blocking, cache "
       .. "blocking. Do not use: AVX-512 SIMD intrinsics, OpenMP parallelisation, software prefetching.")
  t.eq(prompts.stage_rules(5, "avx512"), "Stage 5 of 6: you may use register blocking, cache "
       .. "blocking, AVX-512 SIMD intrinsics, OpenMP parallelisation. Do not use: software prefetching.")
  t.contains(prompts.advance(prompts.seed_kernel, 3, t5)[2].content,
             "Advance it to the next stage: add AVX-512 SIMD intrinsics, keeping what already works.")
end)

t.test("--isa=avx2 asks for AVX2/FMA intrinsics and never for AVX-512", function()
  local t2 = with_isa("avx2")
  local text = prompts.task_text(t2)
  t.contains(text, "The CPU has AVX2 and FMA but not AVX-512: vectorise with AVX2/FMA intrinsics "
             .. "(_mm256_*_pd, _mm256_fmadd_pd); AVX-512 intrinsics do not compile.")
  t.eq(text:gsub("\nThe CPU has [^\n]*", ""), paper_task, "otherwise the paper's task")
  local fixed = prompts.fixed(t2)
  t.eq(#fixed, 8)
  for i, msgs in ipairs(fixed) do
    local body = msgs[2].content:gsub("The CPU has [^\n]*", "")
    t.ok(not body:find("AVX%-512"), "prompt " .. i .. " asks for AVX-512: " .. body)
    t.contains(body, "AVX2/FMA")
  end
  t.contains(fixed[3][2].content, "AVX2/FMA intrinsics (_mm256_fmadd_pd)")
  t.eq(prompts.stage_rules(4, "avx2"), "Stage 4 of 6: you may use register blocking, cache "
       .. "blocking, AVX2/FMA SIMD intrinsics. Do not use: OpenMP parallelisation, software prefetching.")
  t.contains(prompts.advance(prompts.seed_kernel, 3, t2)[2].content, "add AVX2/FMA SIMD intrinsics")
  t.contains(prompts.repair("x", 6, "e", t2)[2].content, "_mm256_fmadd_pd")
  -- the narrower ISAs a machine may report have their wording too
  t.contains(prompts.task_text{isa = "avx"}, "AVX intrinsics (_mm256_*_pd, no FMA)")
  t.contains(prompts.stage_rules(6, "sse2"), "SSE2 SIMD intrinsics")
end)

t.test("the seed kernel is a valid stage-1 kernel", function()
  local code = extract.kernel(prompts.seed_kernel)
  t.ok(code, "the seed extracts")
  t.eq(stages.check(1, code).ok, true)
end)

t.test("prompts carry the model's bytes as valid UTF-8", function()
  t.eq(prompts.valid_utf8("caf\u{E9} \u{3C0}"), "caf\u{E9} \u{3C0}", "valid text is left alone")
  t.eq(prompts.valid_utf8("a\xffb\xce"), "a\u{FFFD}b\u{FFFD}")
  -- a sampled kernel cut inside a two-byte character, and a compiler naming a stray byte
  local code = "void f(void) { /* \xcf */ }\xce"
  for _, msgs in ipairs({prompts.refine(code, "kernel.c:1: error: stray '\xff' in program"),
                         prompts.repair(code, 1, "stray '\xff'"), prompts.improve(code, 1)}) do
    local text = msgs[#msgs].content
    t.ok(utf8.len(text) ~= nil, "the tokenizer's input is valid UTF-8")
    t.contains(text, "\u{FFFD}")
  end
end)

t.test("ChatML rendering", function()
  local text = prompts.render{{role = "system", content = "S"}, {role = "user", content = "U"}}
  t.eq(text, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n")
  t.raises(function() prompts.render{{role = "tool", content = "x"}} end, "unknown role 'tool'")
end)

t.test("a task of the suite: its signature, statement, size and its own ladder", function()
  local task = {name = "axpy", size = "test", opt = "O2", isa = "avx2"}
  local spec = bench.task("axpy")
  local text = prompts.task_text(task)
  t.contains(text, spec.prototype)
  t.contains(text, spec.statement)
  t.contains(text, "n = 1000")
  t.contains(text, "-O2 -march=native")
  t.contains(text, "AVX2/FMA")
  t.ok(not text:find("matmul"), "no word of matmul")
  local fixed = prompts.fixed(task)
  t.eq(#fixed, 8)
  local ladder = stages.for_task("axpy")
  for _, tech in ipairs(ladder.own_techniques) do
    t.contains(fixed[1][2].content, stages.name(tech, "avx2"))
  end
  local w = prompts.write(1, task)[2].content
  t.contains(w, "Stage 1 of " .. ladder.count .. ": use plain C only")
  local last = prompts.write(ladder.count, task)[2].content
  t.contains(last, "Stage " .. ladder.count .. " of " .. ladder.count)
  t.eq(prompts.seed(task), spec.reference)
  t.eq(prompts.seed({M = 8}), prompts.seed_kernel)
  -- advancing past the ladder's top improves instead
  t.eq(prompts.advance("x", ladder.count, task)[2].content, prompts.improve("x", ladder.count, task)[2].content)
  t.contains(prompts.advance("x", 1, task)[2].content, "add " .. stages.name(ladder.get(2).introduces, "avx2"))
  -- matmul's words are the paper's whatever the task table says besides
  t.eq(prompts.task_text({M = 256, N = 256, K = 256, name = "matmul"}), prompts.task_text({M = 256, N = 256, K = 256}))
end)


t.test("a CUDA task's prompt: its statement, sizes and signature, device code asked for", function()
  local cuda_tasks = require "engine.cuda_tasks"
  local extract = require "method.extract"
  local spec = cuda_tasks.get("softmax_rows")
  local m = prompts.cuda_write(spec, cuda_tasks.resolve(spec, "train"), "NVIDIA H100 80GB HBM3")
  t.eq({m[1].role, m[2].role}, {"system", "user"})
  t.contains(m[1].content, "CUDA C++ kernels for NVIDIA GPUs")
  local user = m[2].content
  t.contains(user, spec.statement)
  t.contains(user, "Sizes: cols = 1024, rows = 4096.")
  t.contains(user, spec.signature)
  t.contains(user, "It runs on an NVIDIA H100 80GB HBM3.")
  t.contains(user, "one ```cuda code block")
  t.eq(prompts.cuda_write(spec, cuda_tasks.resolve(spec, "test"))[2].content:find("It runs on", 1, true), nil)
  -- an answer in the asked format is the code the harness gets
  local answer = "```cuda\n" .. spec.straightforward .. "```"
  t.eq(extract.cuda_kernel(answer, spec.entry), spec.straightforward:gsub("^%s+", ""):gsub("%s+$", "") .. "\n")
end)

t.run()
