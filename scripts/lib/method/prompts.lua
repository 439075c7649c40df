-- The prompts of a task, in the model's chat format: the paper's matmul (word for word),
-- or any task of the suite (stdlib/tasks), whose spec gives the signature and statement.
--
--   local prompts = require "method.prompts"
--   local task = {M = 256, N = 256, K = 256, opt = "O3"}      -- matmul
--   local task = {name = "axpy", size = "train", opt = "O3"}  -- a task of the suite
--   prompts.fixed(task)                      -- Experiment 1: eight prompts, all techniques
--   prompts.reworded(task)                   -- held out: eight prompts in other words
--   prompts.write(3, task)                   -- a fresh kernel within stage 3's rules
--   prompts.improve(code, 3, task)           -- SQD: a faster kernel, same stage
--   prompts.advance(code, 3, task)           -- SQD: into stage 4, adding its technique
--                                            (at the last stage: the same as improve)
--   prompts.repair(code, 3, message, task)   -- SQD: fix this kernel (here is the error)
--   prompts.refine(code, feedback, task, request)  -- Experiment 3: the next turn, from the
--                                            previous kernel and its evaluation
--   prompts.render(messages)                 -- the ChatML text the policy samples from
--   prompts.answer_start(name)               -- --prefill: the answer begun with the prototype
--
-- Each builder returns a list of chat messages ({role =, content =}); `render` turns
-- them into the prompt text. Edit the wording here; the experiments only call these.
--
-- The vector ISA the prompts ask for is `task.isa` (a key of stages.isas: "avx512",
-- "avx2", "avx", "sse2"); without one, the machine's (bench.machine().simd), since a
-- kernel can only use the intrinsics the machine has. With "avx512" the texts are the
-- paper's, word for word; with another ISA its name replaces AVX-512 and the task says
-- which intrinsics to use (AVX2: "AVX2/FMA", _mm256_*_pd, _mm256_fmadd_pd).
--   prompts.isa("auto")                       -- the machine's; prompts.isa("avx2") checks it

local stages = require "method.stages"

local prompts = {}

prompts.system = "You are an expert in high-performance computing. You write fast, "
  .. "correct C code for x86-64 CPUs."

-- The naive kernel SQD starts from (the paper's seed code; a task of the suite starts
-- from its spec's plain reference: prompts.seed(task)).
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

-- The spec of a task of the suite; nil for matmul (the paper's own wording).
local function spec_of(task)
  if task == nil or task.name == nil or task.name == "matmul" then return nil end
  return require("engine.tasks").get(task.name)
end

-- The stage ladder a task climbs (Table I for matmul).
function prompts.ladder(task)
  return stages.for_task(task and task.name)
end

function prompts.seed(task)
  local spec = spec_of(task)
  return spec and spec.reference or prompts.seed_kernel
end

-- The vector ISA of the machine kernels are compiled for: `bench_module.machine().simd`
-- (a stand-in's, when it reports one), else the engine's bench, else the paper's AVX-512.
function prompts.machine_isa(bench_module)
  for _, b in ipairs({bench_module or false, rawget(_G, "bench") or package.loaded["engine.bench"] or false}) do
    if b and b.machine then
      local ok, m = pcall(b.machine)
      if ok and type(m) == "table" and stages.isas[m.simd] then return m.simd end
    end
  end
  return stages.default_isa
end

-- An --isa choice made concrete: "auto" (or nil) is the machine's ISA, any other must be a
-- key of stages.isas.
function prompts.isa(choice, bench_module)
  if choice == nil or choice == "" or choice == "auto" then return prompts.machine_isa(bench_module) end
  stages.isa(choice)  -- raises for an unknown one
  return choice
end

local function isa_of(task) return (task and task.isa) or prompts.machine_isa() end

-- What the task says of the ISA when it is not the paper's AVX-512.
prompts.isa_notes = {
  avx2 = "The CPU has AVX2 and FMA but not AVX-512: vectorise with AVX2/FMA intrinsics "
    .. "(_mm256_*_pd, _mm256_fmadd_pd); AVX-512 intrinsics do not compile.",
  avx = "The CPU has AVX but not AVX2, FMA or AVX-512: vectorise with AVX intrinsics "
    .. "(_mm256_*_pd, no FMA); AVX-512 and FMA intrinsics do not compile.",
  sse2 = "The CPU has SSE2 but not AVX: vectorise with SSE2 intrinsics (_mm_*_pd); AVX "
    .. "and AVX-512 intrinsics do not compile.",
}

local function sizes(task)
  return string.format("M = %d, N = %d, K = %d", task.M or 256, task.N or 256, task.K or 256)
end

local function size_words(spec, task)
  local tasks = require "engine.tasks"
  local _, size = tasks.resolve_spec(spec, task.size)
  return tasks.size_text(size, " = ", ", ")
end

local function build_line(task)
  return "It is compiled with -" .. (task.opt or "O3") .. " -march=native -fopenmp and runs on "
    .. (task.threads and (task.threads .. " cores") or "all cores of the node") .. "."
end

-- A task's text: its signature, what it computes, the size it is benchmarked at and how
-- it is built and run, what it may not call; the ISA's note, on a machine without the
-- paper's AVX-512, before that last line.
local function task_lines(task, prototype, statement, size, library)
  local lines = {
    "Write a C function with exactly this signature:",
    "",
    prototype,
    "",
    statement,
    "The kernel is benchmarked with " .. size .. ". " .. build_line(task),
    library,
  }
  local note = prompts.isa_notes[isa_of(task)]
  if note then table.insert(lines, #lines, note) end
  return table.concat(lines, "\n")
end

-- A task of the suite: its signature and statement, its size, how it is built and run.
local function spec_text(spec, task)
  return task_lines(task, (spec.prototype:gsub(";%s*$", "")),
                    spec.statement .. " Write every element of every output: outputs do not start as zeros.",
                    size_words(spec, task),
                    "Do not call BLAS or any other library routine for the computation; "
                      .. "<immintrin.h>, <omp.h>, <stdlib.h>, <string.h> and <math.h> may be used.")
end

-- The task: signature, layout, sizes, and how the kernel is built and run.
function prompts.task_text(task)
  task = task or {}
  local spec = spec_of(task)
  if spec then return spec_text(spec, task) end
  return task_lines(task, "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)",
                    "It computes C = A x B for row-major double-precision matrices: A is M x K, B is K x N "
                      .. "and C is M x N. C must be fully overwritten (do not assume it holds zeros).",
                    sizes(task),
                    "Do not call BLAS or any other library routine for the multiplication; "
                      .. "<immintrin.h>, <omp.h>, <stdlib.h> and <string.h> may be used.")
end

local function technique_list(list, isa)
  local names = {}
  for i, tech in ipairs(list) do names[i] = stages.name(tech, isa) end
  return table.concat(names, ", ")
end

-- The rules of a stage, as the prompts state them, for kernels of `isa` (nil: the
-- machine's), on `ladder` (nil: Table I).
function prompts.stage_rules(s, isa, ladder)
  isa = isa or prompts.machine_isa()
  ladder = ladder or stages
  local stage = ladder.get(s)
  local lines = {}
  if #stage.allowed == 0 then
    lines[1] = string.format("Stage %d of %d: use plain C only (loop order, scalar code); "
                             .. "use none of: %s.", s, ladder.count,
                             technique_list(ladder.forbidden(s), isa))
  else
    lines[1] = string.format("Stage %d of %d: you may use %s.", s, ladder.count,
                             technique_list(stage.allowed, isa))
    local forbidden = ladder.forbidden(s)
    if #forbidden > 0 then lines[2] = "Do not use: " .. technique_list(forbidden, isa) .. "." end
  end
  return table.concat(lines, " ")
end

local answer_format = "Answer with the complete C code in one ```c code block."

-- Text with every byte that is not part of valid UTF-8 replaced by U+FFFD. Prompts carry
-- the model's own kernels and the compiler's words about them; a sampled kernel may end
-- inside a multi-byte character, and the tokenizer takes valid text only.
function prompts.valid_utf8(text)
  local out, i = {}, 1
  while i <= #text do
    local ok, bad = utf8.len(text, i)
    if ok then
      out[#out + 1] = text:sub(i)
      break
    end
    out[#out + 1] = text:sub(i, bad - 1) .. "\u{FFFD}"
    i = bad + 1
  end
  return table.concat(out)
end

local function messages(user)
  return {{role = "system", content = prompts.system}, {role = "user", content = prompts.valid_utf8(user)}}
end

-- Experiment 1: eight fixed prompts, each asking for every technique of Table I; they
-- differ in wording and emphasis so a group of steps sees varied requests. In the
-- templates {ISA} is the vector ISA's name and {FMA} its fused multiply-add intrinsics.
prompts.fixed_templates = {
  "Use every technique that helps: register blocking, cache blocking, {ISA} SIMD "
    .. "intrinsics, OpenMP parallelisation and software prefetching.",
  "Apply register blocking and cache blocking, vectorise with {ISA} intrinsics, "
    .. "parallelise with OpenMP and add software prefetching.",
  "Aim for the highest GFLOPS: combine OpenMP threads, {FMA}, a "
    .. "register-blocked micro-kernel, cache blocking and prefetching.",
  "Structure the kernel like an optimised BLAS: cache blocks for L1/L2, a "
    .. "register-blocked {ISA} micro-kernel, OpenMP over the outer blocks, prefetching.",
  "Make the inner loop an {ISA} micro-kernel with several accumulators (register "
    .. "blocking), tile the loops for the caches, parallelise with OpenMP and prefetch.",
  "Optimise for a many-core CPU with {ISA}: OpenMP parallelisation, cache blocking, "
    .. "register blocking, SIMD intrinsics and software prefetching.",
  "Write a fast kernel that uses register blocking, cache blocking, {ISA} SIMD, "
    .. "OpenMP and _mm_prefetch, keeping it correct for the given sizes.",
  "Use all five techniques -- register blocking, cache blocking, {ISA} SIMD, OpenMP "
    .. "and prefetching -- and keep the code simple enough to be correct.",
}

local fma_phrases = {
  avx512 = "AVX-512 FMA intrinsics",
  avx2 = "AVX2/FMA intrinsics (_mm256_fmadd_pd)",
  avx = "AVX intrinsics (_mm256_mul_pd, _mm256_add_pd)",
  sse2 = "SSE2 intrinsics (_mm_mul_pd, _mm_add_pd)",
}

-- The eight emphases for kernels of `isa` (nil: the machine's).
function prompts.emphases(isa)
  isa = isa or prompts.machine_isa()
  local name = stages.isa(isa).name
  local out = {}
  for i, template in ipairs(prompts.fixed_templates) do
    out[i] = template:gsub("{FMA}", fma_phrases[isa]):gsub("{ISA}", name)
  end
  return out
end

-- The paper's eight, for AVX-512.
prompts.fixed_emphases = prompts.emphases("avx512")

-- A task of the suite: eight emphases over the techniques its spec lists ({LIST}).
prompts.task_templates = {
  "Use every technique that helps: {LIST}.",
  "Apply {LIST}.",
  "Aim for the highest speed: combine {LIST}.",
  "Optimise for a many-core CPU with {ISA}: {LIST}.",
  "Write a fast kernel that uses {LIST}, keeping it correct for the given sizes.",
  "Use {LIST}, and keep the code simple enough to be correct.",
  "Make the memory accesses contiguous first, then add {LIST}.",
  "Find what limits the speed (memory bandwidth or arithmetic), then use {LIST}.",
}

-- The techniques a task's spec lists, in words: "A, B and C".
local function technique_words(task, isa)
  local names = {}
  for i, tech in ipairs(prompts.ladder(task).own_techniques or stages.techniques) do names[i] = stages.name(tech, isa) end
  return #names == 0 and "plain, cache-friendly C"
    or #names == 1 and names[1] or table.concat(names, ", ", 1, #names - 1) .. " and " .. names[#names]
end

function prompts.task_emphases(task, isa)
  isa = isa or isa_of(task)
  local list = technique_words(task, isa)
  local out = {}
  for i, template in ipairs(prompts.task_templates) do
    out[i] = template:gsub("{LIST}", list):gsub("{ISA}", stages.isa(isa).name)
  end
  return out
end

function prompts.fixed(task)
  if task and task.cuda then  -- a CUDA task has one prompt: its statement, sizes and signature
    local cuda_tasks = require "engine.cuda_tasks"
    local spec = cuda_tasks.get(task.cuda)
    return {prompts.cuda_write(spec, cuda_tasks.resolve(spec, task.size or "train"), task.gpu)}
  end
  local out = {}
  local emphases = spec_of(task) and prompts.task_emphases(task) or prompts.emphases(isa_of(task))
  for i, emphasis in ipairs(emphases) do
    out[i] = messages(table.concat({prompts.task_text(task), "", emphasis, "", answer_format},
                                   "\n"))
  end
  return out
end

-- Held-out wordings (heldout.lua): the same task, the same facts and the same answer
-- format as prompts.fixed, but a framing sentence and emphases that no training prompt
-- and no pretraining example uses, so that a policy is asked in words it never learned
-- from. The framing replaces "Write a C function with exactly this signature:".
prompts.reworded_framings = {
  "Implement the C routine declared below, keeping its name, parameter list and types "
    .. "exactly as given:",
  "Below is the declaration of a C routine; provide its complete definition without "
    .. "altering the declaration:",
  "Your job is the body of the following C routine, whose declaration must stay as it is:",
  "Fill in an implementation of this C routine, declared as follows (do not rename it or "
    .. "change its parameters):",
}

-- matmul's eight held-out emphases ({ISA}, {FMA} as in fixed_templates).
prompts.reworded_templates = {
  "Speed is what counts here: split the matrices into tiles that stay in cache, keep a "
    .. "small block of C in registers, use {ISA} vector instructions, spread the work across "
    .. "threads with OpenMP and fetch data ahead of its use.",
  "Think like the author of a tuned linear-algebra library: an inner kernel built on "
    .. "{FMA}, cache-sized tiles around it, OpenMP threads over the tiles and explicit "
    .. "prefetch instructions.",
  "Before coding, plan how the data moves through registers, L1 and L2; then carry out that "
    .. "plan with {ISA} intrinsics, OpenMP threading and prefetch hints.",
  "Keep several independent partial sums in {ISA} registers, reuse every loaded value as "
    .. "often as you can, tile for the cache hierarchy, run on all cores with OpenMP and "
    .. "prefetch the next tiles.",
  "Correctness comes first, throughput second: a simple, correct tiling with {ISA} vectors, "
    .. "OpenMP threads, register reuse and prefetching beats a clever broken one.",
  "Target a multi-core x86-64 server: hand the outer tiles to OpenMP threads and, inside "
    .. "each tile, run an {ISA} inner kernel that keeps its sums in registers and prefetches.",
  "Minimise memory traffic: tile or pack the operands for cache reuse, hold partial sums "
    .. "of C in {ISA} registers, process the tiles on every core with OpenMP and prefetch "
    .. "upcoming data.",
  "Give the fastest version you can produce with cache tiling, register tiling, {ISA} SIMD, "
    .. "OpenMP and prefetching, without sacrificing correctness at the stated sizes.",
}

-- A task of the suite's eight held-out emphases ({LIST}, {ISA} as in task_templates).
prompts.reworded_task_templates = {
  "Speed is what counts here; the techniques that suit this routine are {LIST}.",
  "Work out where the time goes (arithmetic or memory traffic) and bring in {LIST} where "
    .. "they pay off.",
  "Start from a correct version, then make it quick with {LIST}.",
  "Target a multi-core x86-64 server with {ISA}, drawing on {LIST}.",
  "Keep the data streaming through the caches in order, and go faster with {LIST}.",
  "A correct answer that uses {LIST} well is worth more than a clever broken one.",
  "Tune it for throughput on every core, drawing on {LIST}.",
  "Give the fastest version you can produce with {LIST}, without sacrificing correctness "
    .. "at the stated sizes.",
}

-- The held-out emphases of a task (nil: matmul) for kernels of `isa` (nil: the task's).
function prompts.reworded_emphases(task, isa)
  isa = isa or isa_of(task)
  local name = stages.isa(isa).name
  local out = {}
  if spec_of(task) then
    local list = technique_words(task, isa)
    for i, template in ipairs(prompts.reworded_task_templates) do
      out[i] = template:gsub("{LIST}", list):gsub("{ISA}", name)
    end
    return out
  end
  for i, template in ipairs(prompts.reworded_templates) do
    out[i] = template:gsub("{FMA}", fma_phrases[isa]):gsub("{ISA}", name)
  end
  return out
end

-- The task's statement under the i-th held-out framing.
local function reworded_task_text(task, i)
  local text = prompts.task_text(task)
  local first, rest = text:match("^([^\n]*)\n(.*)$")
  assert(first == "Write a C function with exactly this signature:",
         "prompts.reworded: the task text's first line changed: " .. tostring(first))
  return prompts.reworded_framings[(i - 1) % #prompts.reworded_framings + 1] .. "\n" .. rest
end

-- Held out: as many prompts as prompts.fixed gives, in the held-out framings and emphases.
function prompts.reworded(task)
  local out = {}
  for i, emphasis in ipairs(prompts.reworded_emphases(task)) do
    local text = {reworded_task_text(task, i), "", emphasis, "", answer_format}
    out[i] = messages(table.concat(text, "\n"))
  end
  return out
end

-- CUDA tasks (stdlib/cuda_tasks, docs/tasks.md): the model writes the device code of a
-- kernel the harness launches with the spec's grid and block, which the statement gives.
prompts.cuda_system = "You are an expert in GPU programming. You write fast, correct CUDA C++ "
  .. "kernels for NVIDIA GPUs."
local cuda_answer_format = "Answer with the complete CUDA C++ device code in one ```cuda code block: "
  .. "the kernel and any __device__ helpers, no host code and no main (the harness launches it)."

-- A fresh kernel for a CUDA task at a size (`resolved`: cuda_tasks.resolve's record):
-- the statement, the sizes, the signature, and the GPU's name when given.
function prompts.cuda_write(spec, resolved, gpu)
  local sizes = {}
  for k, v in pairs(resolved.size) do sizes[#sizes + 1] = k .. " = " .. v end
  table.sort(sizes)
  local user = table.concat({
    spec.statement,
    "Sizes: " .. table.concat(sizes, ", ") .. ".",
    "The kernel's signature:",
    "```cuda\n" .. spec.signature .. "\n```",
    (gpu and ("It runs on an " .. gpu .. ". ") or "") .. "Make it as fast as you can while staying correct "
      .. "in single precision.",
    cuda_answer_format}, "\n")
  return {{role = "system", content = prompts.cuda_system}, {role = "user", content = prompts.valid_utf8(user)}}
end

local function code_block(code)
  return "```c\n" .. code:gsub("%s+$", "") .. "\n```"
end

-- A fresh kernel within stage s.
function prompts.write(s, task)
  return messages(table.concat({prompts.task_text(task), "", prompts.stage_rules(s, isa_of(task), prompts.ladder(task)),
                                "", answer_format}, "\n"))
end

-- SQD "improve": a faster kernel at the same stage.
function prompts.improve(code, s, task)
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s, isa_of(task), prompts.ladder(task)), "",
    "Here is a correct kernel for this stage:", code_block(code), "",
    "Make it faster while staying within the stage's rules.", answer_format}, "\n"))
end

-- SQD "advance": from stage s into s + 1, adding the technique the next stage brings.
function prompts.advance(code, s, task)
  local ladder = prompts.ladder(task)
  if s >= ladder.count then return prompts.improve(code, s, task) end  -- nothing deeper
  local new = ladder.get(s + 1).introduces
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s + 1, isa_of(task), ladder), "",
    "Here is a correct kernel from the previous stage:", code_block(code), "",
    "Advance it to the next stage: add " .. stages.name(new, isa_of(task))
      .. ", keeping what already works.",
    answer_format}, "\n"))
end

-- SQD "repair": the kernel failed with `message`; fix it within stage s.
function prompts.repair(code, s, message, task)
  return messages(table.concat({
    prompts.task_text(task), "", prompts.stage_rules(s, isa_of(task), prompts.ladder(task)), "",
    "This kernel fails:", code_block(code), "",
    "The error:", "```", tostring(message or "(no message)"):sub(1, 2000), "```", "",
    "Fix it so that it compiles, runs and computes the right result, within the stage's "
      .. "rules.", answer_format}, "\n"))
end

-- Experiment 3's next turn: the previous turn's kernel and what its evaluation said
-- (feedback.text), with the request to fix it or make it faster. code nil or "": the
-- previous answer held no kernel to extract, so the prompt says so and repeats `request`
-- (the first turn's user message; nil: the task's statement and the answer format).
function prompts.refine(code, feedback_text, task, request)
  local said = tostring(feedback_text or "(no feedback)")
  if code == nil or code == "" then
    return messages(table.concat({
      "Your previous answer held no C function that could be extracted:", "```", said, "```", "",
      "Here is the request again; answer it with the complete function.", "",
      request or table.concat({prompts.task_text(task), "", answer_format}, "\n")}, "\n"))
  end
  return messages(table.concat({
    prompts.task_text(task), "",
    "Here is your previous kernel:", code_block(code), "",
    "Its evaluation:", "```", said, "```", "",
    "If it fails, fix it; if it is correct, make it faster. Return the whole kernel, keeping "
      .. "it correct.", answer_format}, "\n"))
end

-- Experiments 1 and 3's fixed prompts of a run's tasks, each {messages =, task =}: the
-- task's eight, or in a mixture every task's first, then every task's second, and so on,
-- so that the steps go round the tasks. names: the run's task names; tasks: name -> task.
function prompts.fixed_list(names, tasks)
  local list = {}
  for e = 1, #prompts.task_templates do
    for _, name in ipairs(names) do
      local all = prompts.fixed(tasks[name])
      if all[e] then list[#list + 1] = {messages = all[e], task = name} end
    end
  end
  return list
end

-- The fixed prompts of a step: per_step of the list, in turn.
function prompts.of_step(list, step, per_step)
  local chosen = {}
  for j = 1, per_step do chosen[j] = list[((step - 1) * per_step + j - 1) % #list + 1] end
  return chosen
end

-- With --prefill, the start of the answer a prompt ends with: a fence, the headers most
-- answers open with and the task's prototype with its body's brace (matmul's for nil). The
-- policy writes the body, the judge reads the two together, and an update scores only the
-- tokens the policy wrote: a completion of a given signature, as code benchmarks pose it.
function prompts.answer_start(name)
  local prototype = require("engine.tasks").get(name or "matmul").prototype
  return "```c\n#include <immintrin.h>\n#include <omp.h>\n\n" .. prototype .. " {\n"
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
