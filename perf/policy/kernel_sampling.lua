-- How fast policies write one task's kernels on this machine: 16 completions of the task's
-- first fixed prompt at temperature 1 (up to 1,536 tokens each, after a short warm-up), per
-- model: tokens, seconds, tokens a second, and seconds per kernel as a ratio to the first
-- model's (the baseline, measured in the same run).
--
--   engine perf/policy/kernel_sampling.lua [--task=axpy] [--device=cpu] MODEL_DIR...
local args = require "engine.args"
local prompts = require "method.prompts"
local wiring = require "method.wiring"

local spec = {
  description = "Samples 16 kernels of one task's fixed prompt from each model; prints the rates.",
  positional = "MODEL_DIR...",
  options = {
    {"task", "axpy", "the task of the suite"},
    {"device", "cpu", "where the policies run"},
    {"n", 16, "completions", min = 1},
  },
}

local opts = args.parse(arg, spec)
local dirs = opts._ or {}
if #dirs == 0 then error("kernel_sampling: name at least one model directory", 0) end
local task = wiring.task({task = opts.task, task_size = "train", size = 128, isa = "avx512", threads = 0},
                         {opt = "O3"})
local text = prompts.render(prompts.fixed(task)[1])
print(string.format("%s: %d completions of %s's first fixed prompt, temperature 1, on %s",
                    os.date("!%Y-%m-%d"), opts.n, opts.task, opts.device))
print(string.format("%-40s %12s %8s %8s %10s %12s", "model", "parameters", "tokens", "seconds", "tokens/s",
                    "s/kernel x"))
local base
for _, dir in ipairs(dirs) do
  local pol = policy.load(dir, {device = opts.device, dtype = "fp32"})
  pol:sample({text}, {n = 2, max_tokens = 16, seed = 9})
  local t0 = sys.now()
  local out = pol:sample({text}, {n = opts.n, temperature = 1, max_tokens = 1536, seed = 1})[1]
  local seconds = sys.now() - t0
  local tokens = 0
  for _, c in ipairs(out) do tokens = tokens + #c.tokens end
  base = base or seconds
  print(string.format("%-40s %12d %8d %8.1f %10.0f %11.2fx", dir, pol:info().parameter_bytes // 4, tokens, seconds,
                      tokens / seconds, seconds / base))
end
