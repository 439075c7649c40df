-- What a policy writes for one prompt: samples a group of kernels, benchmarks them and
-- reports how many compile and pass verification, which technique combinations they use
-- and how repetitive the texts are. The figures of docs/results.md come from here.
--
--   engine model_check.lua                          # the default model, stage 6, 64 kernels
--   engine model_check.lua --model=DIR --prompt=fixed --n=128 --json=check.json
--   engine model_check.lua --task=axpy --n=16            # another task of the suite
--   ENGINE_TARGET=x86-64-v3 engine model_check.lua   # as on a machine without AVX-512
--
-- The prompt names the machine's vector ISA (--isa=auto) or the one --isa forces; the
-- figures count the kernels whose vectors that ISA lacks (beyond_isa: they cannot
-- compile there).

local args = require "engine.args"
local cli = require "cli"
local evaluate = require "evaluate"
local metrics = require "metrics"
local options = require "options"
local prompts = require "prompts"
local stages = require "stages"
local wiring = require "wiring"

local M = {}

M.spec = {
  description = "Samples kernels from a policy for one prompt and reports compile and "
    .. "verification rates, technique combinations and text diversity.",
  options = {
    {"model", nil, "policy checkpoint [default: " .. wiring.default_model .. "]",
     type = "string"},
    {"prompt", "write", "which prompt: write (SQD's fresh kernel at --stage) or fixed "
     .. "(Experiment 1's first fixed prompt)", choices = {"write", "fixed"}},
    {"stage", 6, "stage of the write prompt (at most the task's last)", min = 1, max = stages.count},
    {"n", 64, "kernels to sample", min = 1},
    {"temperature", 1.0, "sampling temperature", min = 0},
    {"max_tokens", 1024, "longest completion in tokens", min = 1},
    {"size", 128, "matrix size of matmul: M = N = K", min = 1},
    {"task", "matmul", "the task of the suite (bench.tasks())"},
    {"task_size", "", "the named size of --task (empty: train)"},
    {"task_dir", "", "a folder of task specs added to the suite's"},
    {"opt", "O3", "compiler level", choices = {"O0", "O1", "O2", "O3"}},
    {"threads", 0, "threads per kernel (0: all cores)", min = 0},
    {"timeout", 2.0, "seconds a kernel may run", above = 0},
    {"warmup", 1, "untimed runs before timing", min = 0},
    {"runs", 2, "timed runs per kernel", min = 1},
    options.verify_option,
    {"device", "auto", "where the policy runs: auto (CUDA when present, else cpu), cpu, cuda, "
     .. "cuda:N", check = options.check_device},
    {"seed", 1, "sampling seed"},
    {"isa", "auto", "vector ISA the prompt asks for: auto (the machine's, bench.machine().simd), "
     .. "avx512 (the paper's prompts) or avx2", choices = {"auto", "avx512", "avx2"}},
    {"json", nil, "also write the figures to this file", type = "string"},
    cli.debug_option,
  },
}

local compiled_statuses = {ok = true, verification_error = true, runtime_error = true,
                           timeout = true, rejected = true}

-- The figures of one group of judged kernels, written for `isa` (a key of stages.isas;
-- nil: the paper's AVX-512).
function M.figures(results, isa)
  local n = #results
  local compiled, verified, combos, texts, counts = 0, 0, {}, {}, {}
  local verified_combos, best, beyond = {}, nil, 0
  local width = stages.isa(isa).width
  for _, r in ipairs(results) do
    counts[r.status] = (counts[r.status] or 0) + 1
    if compiled_statuses[r.status] then compiled = compiled + 1 end
    local used = r.code and stages.detect(r.code)
    if used and stages.vector_bits(used.simd) > width then beyond = beyond + 1 end
    local combo = used and table.concat(stages.list(used), "+") or nil
    if combo == "" then combo = "plain" end
    if combo then combos[combo] = (combos[combo] or 0) + 1 end
    if r.status == "ok" then
      verified = verified + 1
      verified_combos[combo] = (verified_combos[combo] or 0) + 1
      if not best or r.gflops > best then best = r.gflops end
    end
    local text = r.completion or ""
    texts[text] = (texts[text] or 0) + 1
  end
  local function size(set)
    local k = 0
    for _ in pairs(set) do k = k + 1 end
    return k
  end
  local top = 0
  for _, c in pairs(texts) do top = math.max(top, c) end
  return {samples = n, compiled = compiled, verified = verified,
          compile_rate = n > 0 and compiled / n or 0, verify_rate = n > 0 and verified / n or 0,
          combinations = size(combos), verified_combinations = size(verified_combos),
          combos = combos, verified_combos = verified_combos, distinct_texts = size(texts),
          top_text_share = n > 0 and top / n or 0, counts = counts, best_gflops = best,
          isa = isa or stages.default_isa, beyond_isa = beyond}
end

function M.run(opts)
  options.check_task(opts)  -- the task exists, and its size
  local deps = wiring.deps()
  local pol, dir = wiring.load_policy({model = opts.model, device = opts.device,
                                       dtype = "fp32"}, deps)
  -- the problem and benchmark settings exactly as the experiments build them
  local config = {opt = opts.opt}
  local task = wiring.task(opts, config)
  local stage = math.min(opts.stage, stages.for_task(task.name).count)
  local messages = opts.prompt == "fixed" and prompts.fixed(task)[1]
                   or prompts.write(stage, task)
  local t0 = sys.now()
  local out = pol:sample({prompts.render(messages)}, {n = opts.n, temperature = opts.temperature,
                                                      max_tokens = opts.max_tokens,
                                                      seed = opts.seed})[1]
  local t1 = sys.now()
  local results = evaluate.completions(out, {bench = deps.bench,
                                             bench_opts = wiring.bench_opts(opts, config),
                                             stage = opts.prompt == "write" and stage or nil,
                                             isa = task.isa, task = task.name})
  local f = M.figures(results, task.isa)
  f.model, f.prompt, f.stage, f.temperature, f.seed = dir, opts.prompt, stage,
                                                      opts.temperature, opts.seed
  f.task = task.name or "matmul"
  f.sample_seconds, f.evaluate_seconds = t1 - t0, sys.now() - t1
  return f
end

function M.print(f)
  print(string.format("%s, task %s, %s prompt%s for %s, %d samples at temperature %g (seed %d)", f.model,
                      f.task or "matmul", f.prompt, f.prompt == "write" and (" stage " .. f.stage) or "",
                      stages.isa(f.isa).name, f.samples, f.temperature, f.seed))
  print(string.format("  compile      %3d  (%.0f%%)", f.compiled, 100 * f.compile_rate))
  print(string.format("  verified     %3d  (%.0f%%)   best %s GFLOPS", f.verified,
                      100 * f.verify_rate, f.best_gflops and string.format("%.2f", f.best_gflops) or "-"))
  print(string.format("  wider vectors than %s: %d (%.0f%%)", stages.isa(f.isa).name, f.beyond_isa,
                      f.samples > 0 and 100 * f.beyond_isa / f.samples or 0))
  print(string.format("  technique combinations: %d among all, %d among verified",
                      f.combinations, f.verified_combinations))
  print(string.format("  distinct texts %d; the most frequent is %.1f%% of the samples",
                      f.distinct_texts, 100 * f.top_text_share))
  print("  statuses: " .. metrics.counts_text(f.counts))
  local names = {}
  for combo in pairs(f.verified_combos) do names[#names + 1] = combo end
  table.sort(names, function(a, b) return f.verified_combos[a] > f.verified_combos[b] or
                                          (f.verified_combos[a] == f.verified_combos[b] and a < b) end)
  for _, combo in ipairs(names) do
    print(string.format("    %3d  %s", f.verified_combos[combo], combo))
  end
  print(string.format("  sampling %.1f s, evaluation %.1f s", f.sample_seconds, f.evaluate_seconds))
end

function M.main(argv)
  local opts = args.parse(argv, M.spec)
  local f = M.run(opts)
  M.print(f)
  if opts.json then json.write(opts.json, f) end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
