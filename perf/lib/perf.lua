-- What several of perf/'s benchmarks have in common: the options they share, declared once
-- so that each reads the same in every --help (engine.args declarations, a fresh table a
-- call), and a policy held loaded while a benchmark measures, as an experiment holds one.
-- perf/ is not on package.path (and not installed), so a benchmark loads this file by path:
--
--   local perf = dofile(engine.root .. "/perf/lib/perf.lua")
--   local opts = args.parse(arg, {description = "...", options = {perf.size(256, 16), perf.threads()}})
local wiring = require "method.wiring"

local perf = {}

-- --size: the matmul problem's M = N = K; `min` is the smallest the benchmark can time.
function perf.size(default, min)
  return {"size", default, "M = N = K", min = min or 1}
end

-- --threads: each kernel's threads, 0 for every core (as the experiments' option).
function perf.threads()
  return {"threads", 0, "threads per kernel (0: all cores)", min = 0}
end

-- --repeats: evaluations of one kernel; two at least, for a coefficient of variation.
function perf.repeats(default)
  return {"repeats", default, "evaluations of one kernel for the coefficient of variation", min = 2}
end

-- --kernels: the labelled example kernels that the tests judge too.
function perf.kernels()
  return {"kernels", engine.root .. "/tests/data/kernels", "the labelled example kernels"}
end

-- The main job's step, sampled: --prompts fixed prompts x --G completions of at most
-- --max_tokens tokens each, by --model.
function perf.prompts(default)
  return {"prompts", default, "fixed prompts in a step", min = 1}
end

function perf.G(default)
  return {"G", default, "completions per prompt", min = 1}
end

function perf.max_tokens()
  return {"max_tokens", 512, "longest completion in tokens", min = 1}
end

function perf.model()
  return {"model", wiring.default_model, "the policy", type = "string"}
end

-- --model of a benchmark that times kernels beside a policy (perf.hold_policy); none by default.
function perf.held_model()
  return {"model", "", "a policy to hold loaded on CUDA (else the CPU) and sampled once throughout, "
          .. "as an experiment does", type = "string"}
end

-- A device name as the policy takes it: auto is CUDA when this engine sees a GPU, else the CPU.
function perf.device(name)
  if name ~= "auto" then return name end
  return policy.cuda_available() and "cuda" or "cpu"
end

-- The engine as an experiment has it while kernels are timed: a policy loaded and sampled
-- once (its context, caches and threads made). Returns the policy and its device, nothing
-- for dir "". Keep the policy in a variable for as long as it is to be held.
function perf.hold_policy(dir)
  if dir == "" then return nil end
  local device = perf.device("auto")
  local pol = policy.load(dir, {device = device})
  pol:sample({"void matmul_optimized("}, {n = 4, max_tokens = 16, seed = 1})
  return pol, device
end

return perf
