-- CUDA tasks in the experiments: a stand-in for the CPU benchmark (deps.bench) that judges
-- each kernel of a batch on the GPU (engine.cuda_tasks.evaluate: NVRTC, its own child
-- process and context, fresh inputs, events, the check against libtorch), so evaluate.lua,
-- the session's rewards and the best kernel's re-measurement take it unchanged.
--
--   local cuda_eval = require "method.cuda_eval"
--   cuda_eval.task_name("cuda:softmax_rows")           -- "softmax_rows"; nil for a CPU task
--   local b = cuda_eval.bench(bench, "softmax_rows", "train", {yardstick = stored})
--   b.evaluate_batch(sources, opts)                     -- results as bench.evaluate_batch's
--   b.gpu, b.yardstick                                  -- bench.cuda()'s record, libtorch's op
--
-- A kernel's speed for rewards (`speed`, unit "% of libtorch") is 100 x libtorch's median
-- call over its own, libtorch's op timed the same way once per run (the yardstick): 100 is
-- par, above is faster. gflops and gbps stay the physical rates.

local cuda_tasks = require "engine.cuda_tasks"

local M = {}

M.prefix = "cuda:"
M.unit = "% of libtorch"

-- The CUDA task a --task names ("cuda:NAME"), or nil.
function M.task_name(task)
  return type(task) == "string" and task:match("^" .. M.prefix .. "(.+)$") or nil
end

-- What the judge's statuses are worth: the statuses of Eq. 3.
local statuses = {
  ok = "ok", compile_error = "compile_error", verification_error = "verification_error",
  runtime_error = "runtime_error", rejected = "rejected", timeout = "timeout",
  load_error = "compile_error",     -- the entry is missing or the cubin does not load
  launch_error = "runtime_error",   -- the launch the spec sets is refused for this kernel
}

-- A largest error as the record declares it: a number, 1e308 for an output's NaN (the
-- judge's infinity, which a record cannot hold), as the CPU verdict writes it.
local function finite_error(e)
  if e == nil then return nil end
  return (e == e and e < math.huge) and e or 1e308
end

-- One judged kernel as the experiments read a benchmark result (times in seconds).
local function result_of(rec, y)
  local status = statuses[rec.status]
  if not status then
    error(string.format("the CUDA judge answered '%s' for a kernel of %s: %s", tostring(rec.status),
                        tostring(rec.task), tostring(rec.log or rec.message or "")), 0)
  end
  local r = {status = status, message = rec.log ~= "" and rec.log or rec.message, compile_ms = rec.compile_ms,
             max_rel_error = finite_error(rec.max_error), cuda_status = rec.status ~= status and rec.status or nil,
             -- what the kernel printed (device printf), kept with the result and out of its message
             kernel_output = rec.kernel_output ~= "" and rec.kernel_output or nil}
  if rec.times_ms then
    r.times = {}
    for i, ms in ipairs(rec.times_ms) do r.times[i] = ms / 1000 end
    if #r.times > 0 then r.min = math.min(table.unpack(r.times)) end
  end
  if rec.median_ms then r.median, r.cov = rec.median_ms / 1000, rec.cov end
  r.gflops, r.gbps = rec.gflops, rec.gbps
  if status == "ok" then
    r.vs_yardstick = y.median_ms / rec.median_ms
    r.speed, r.unit = 100 * r.vs_yardstick, M.unit
  else
    r.gflops = nil  -- only a verified kernel has a speed
  end
  return r
end

-- The GPU `b` (the bench module) runs CUDA tasks on: bench.cuda()'s record, asked once
-- (each asking starts a child and the driver), or nil and why this machine cannot.
function M.gpu(b)
  if not b.cuda then return nil, "this engine's bench has no CUDA (bench.cuda): it was built without it" end
  local gpu = b.cuda()
  if not gpu.available then return nil, "CUDA tasks are unavailable on this machine: " .. tostring(gpu.reason) end
  return gpu
end

-- libtorch's op for `name` at `size`, timed on the GPU as the kernels are
-- (cuda_tasks.yardstick); an error naming the op where it could not be timed.
function M.yardstick(b, name, size)
  local spec = cuda_tasks.get(name)
  local y = cuda_tasks.yardstick(spec.name, size, {bench = b})
  if y.status ~= "ok" then
    error(string.format("libtorch's %s could not be timed (%s): %s", spec.reference, tostring(y.status),
                        tostring(y.log or y.message or "")), 0)
  end
  return y
end

-- The stand-in for `name` at `size` (a name of its spec's sizes). b: the engine's bench
-- module (or a test's). opts: gpu (M.gpu's record, asked here when absent), yardstick
-- (M.yardstick's record, measured here when absent), warmup, calls, timeout (the judge's;
-- nil: its defaults), warm (judged by the evaluation process's warm CUDA child:
-- cuda_tasks.evaluate's option). Refused with the reason where the machine has no usable GPU, or
-- libtorch's op cannot be timed.
function M.bench(b, name, size, opts)
  opts = opts or {}
  local spec = cuda_tasks.get(name)
  local gpu, why = opts.gpu
  if not gpu then gpu, why = M.gpu(b) end
  if not gpu then error(why, 0) end
  local y = opts.yardstick or M.yardstick(b, spec.name, size)
  local judge = {warmup = opts.warmup, calls = opts.calls, timeout = opts.timeout, warm = opts.warm}
  local self = {gpu = gpu, yardstick = y, task = spec.name, size = size}
  function self.evaluate_batch(sources)
    local out = {}
    for i, src in ipairs(sources) do
      local rec = cuda_tasks.evaluate(src, {task = spec.name, size = size, yardstick = y, bench = b, machine = gpu,
                                            warmup = judge.warmup, calls = judge.calls, timeout = judge.timeout,
                                            warm = judge.warm})
      out[i] = result_of(rec, y)
    end
    return out
  end
  return self
end

return M
