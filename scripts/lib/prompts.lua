-- The prompts of the matmul task, in the model's chat format.
--
--   local prompts = require "prompts"
--   local task = {M = 256, N = 256, K = 256, opt = "O3"}
--   prompts.fixed(task)                      -- Experiment 1: eight prompts, all techniques
--   prompts.write(3, task)                   -- a fresh kernel within stage 3's rules
--   prompts.improve(code, 3, task)           -- SQD: a faster kernel, same stage
--   prompts.advance(code, 3, task)           -- SQD: into stage 4, adding its technique
--                                            (at the last stage: the same as improve)
--   prompts.repair(code, 3, message, task)   -- SQD: fix this kernel (here is the error)
--   prompts.render(messages)                 -- the ChatML text the policy samples from
--
-- Each builder returns a list of chat messages ({role =, content =}); `render` turns
-- them into the prompt text. Edit the wording here; the experiments only call these.

local stages = require "stages"

local prompts = {}

prompts.system = "You are an expert in high-performance computing. You write fast, "
  .. "correct C code for x86-64 CPUs."

-- The naive kernel SQD starts from (the paper's seed code).
prompts.seed_kernel = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0.0;
            for (int k = 0; k < K; k++)
                sum += A[i * K + k] * B[k * N + j];
            C[i * N + j] = sum;
        }
}
]]

local function sizes(task)
  return string.format("M = %d, N = %d, K = %d", task.M or 256, task.N or 256, task.K or 256)
end

-- The task: signature, layout, sizes, and how the kernel is built and run.
function prompts.task_text(task)
  task = task or {}
  return table.concat({
    "Write a C function with exactly this signature:",
    "",
    "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)",
    "",
    "It computes C = A x B for row-major double-precision matrices: A is M x K, B is K x N "
      .. "and C is M x N. C must be fully overwritten (do not assume it holds zeros).",
    "The kernel is benchmarked with " .. sizes(task) .. ". It is compiled with -"
      .. (task.opt or "O3") .. " -march=native -fopenmp and runs on "
      .. (task.threads and (task.threads .. " cores") or "all cores of the node") .. ".",
    "Do not call BLAS or any other library routine for the multiplication; "
      .. "<immintrin.h>, <omp.h>, <stdlib.h> and <string.h> may be used.",
  }, "\n")
end

local function technique_list(list)
  local names = {}
  for i, tech in ipairs(list) do names[i] = stages.names[tech] end
  return table.concat(names, ", ")
end

-- The rules of a stage, as the prompts state them.
function prompts.stage_rules(s)
  local stage = stages.get(s)
  local lines = {}
  if #stage.allowed == 0 then
    lines[1] = string.format("Stage %d of %d: use plain C only (loop order, scalar code); "
                             .. "use none of: %s.", s, stages.count,
                             technique_list(stages.forbidden(s)))
  else
    lines[1] = string.format("Stage %d of %d: you may use %s.", s, stages.count,
                             technique_list(stage.allowed))
    local forbidden = stages.forbidden(s)
    if #forbidden > 0 then lines[2] = "Do not use: " .. technique_list(forbidden) .. "." end
  end
  return table.concat(lines, " ")
end

local answer_format = "Answer with the complete C code in one ```c code block."

local function messages(user)
  return {{role = "system", content = prompts.system}, {role = "user", content = user}}
end

-- Experiment 1: eight fixed prompts, each asking for every technique of Table I; they
-- differ in wording and emphasis so a group of steps sees varied requests.
prompts.fixed_emphases = {
  "Use every technique that helps: register blocking, cache blocking, AVX-512 SIMD "
    .. "intrinsics, OpenMP parallelisation and software prefetching.",
  "Apply register blocking and cache blocking, vectorise with AVX-512 intrinsics, "
    .. "parallelise with OpenMP and add software prefetching.",
  "Aim for the highest GFLOPS: combine OpenMP threads, AVX-512 FMA intrinsics, a "
    .. "register-blocked micro-kernel, cache blocking and prefetching.",
  "Structure the kernel like an optimised BLAS: cache blocks for L1/L2, a "
    .. "register-blocked AVX-512 micro-kernel, OpenMP over the outer blocks, prefetching.",
  "Make the inner loop an AVX-512 micro-kernel with several accumulators (register "
    .. "blocking), tile the loops for the caches, parallelise with OpenMP and prefetch.",
  "Optimise for a many-core CPU with AVX-512: OpenMP parallelisation, cache blocking, "
    .. "register blocking, SIMD intrinsics and software prefetching.",
  "Write a fast kernel that uses register blocking, cache blocking, AVX-512 SIMD, "
    .. "OpenMP and _mm_prefetch, keeping it correct for the given sizes.",
  "Use all five techniques -- register blocking, cache blocking, AVX-512 SIMD, OpenMP "
    .. "and prefetching -- and keep the code simple enough to be correct.",
}

function prompts.fixed(task)
  local out = {}
  for i, emphasis in ipairs(prompts.fixed_emphases) do
    out[i] = messages(table.concat({prompts.task_text(task), "", emphasis, "", answer_format},
                                   "\n"))
  end
  return out
end

local function code_block(code)
  return "```c\n" .. code:gsub("%s+$", "") .. "\n```"
end

-- A fresh kernel within stage s.
function prompts.write(s, task)
  return messages(table.concat({prompts.task_text(task), "", prompts.stage_rules(s), "",
                                answer_format}, "\n"))
end

-- SQD "improve": a faster kernel at the same stage.
function prompts.improve(code, s, task)
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s), "",
    "Here is a correct kernel for this stage:", code_block(code), "",
    "Make it faster while staying within the stage's rules.", answer_format}, "\n"))
end

-- SQD "advance": from stage s into s + 1, adding the technique the next stage brings.
function prompts.advance(code, s, task)
  if s >= stages.count then return prompts.improve(code, s, task) end  -- nothing deeper
  local new = stages.get(s + 1).introduces
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s + 1), "",
    "Here is a correct kernel from the previous stage:", code_block(code), "",
    "Advance it to the next stage: add " .. stages.names[new] .. ", keeping what already works.",
    answer_format}, "\n"))
end

-- SQD "repair": the kernel failed with `message`; fix it within stage s.
function prompts.repair(code, s, message, task)
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s), "",
    "This kernel fails:", code_block(code), "",
    "The error:", "```", tostring(message or "(no message)"):sub(1, 2000), "```", "",
    "Fix it so that it compiles, runs and computes the right result, within the stage's "
      .. "rules.", answer_format}, "\n"))
end

-- ChatML, the template of Qwen2/2.5 models: the text up to the assistant's turn.
function prompts.render(msgs)
  local parts = {}
  for _, m in ipairs(msgs) do
    if m.role ~= "system" and m.role ~= "user" and m.role ~= "assistant" then
      error("prompts.render: unknown role '" .. tostring(m.role) .. "'", 2)
    end
    parts[#parts + 1] = "<|im_start|>" .. m.role .. "\n" .. m.content .. "<|im_end|>\n"
  end
  parts[#parts + 1] = "<|im_start|>assistant\n"
  return table.concat(parts)
end

return prompts
