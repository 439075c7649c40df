-- What a report says of runs on a CUDA task (experiment1.lua --task=cuda:NAME): the GPU,
-- libtorch's op as each run timed it, and each configuration's best kernel against it.
--
--   local cuda_results = require "report.cuda_results"
--   cuda_results.task(exp)            -- the CUDA task's name, or nil for CPU runs
--   cuda_results.section(exp)         -- markdown: the GPU and the table against libtorch

local cuda_eval = require "method.cuda_eval"
local results = require "report.results"

local M = {}

-- The CUDA task the runs of `exp` (results.load) were on, or nil.
function M.task(exp)
  local first = exp.configs[1]
  return first and first.identity and cuda_eval.task_name(first.identity.task) or nil
end

-- A sample's speed against libtorch at its confirmed rate (the lower of two measurements).
local function vs_libtorch(sample)
  local speed = sample.extra and sample.extra.unit == cuda_eval.unit and sample.extra.speed
  if not speed then return nil end
  local measured = sample.measured_gflops or sample.gflops
  return speed / 100 * (measured > 0 and sample.gflops / measured or 0)
end

local function ms(v) return v and string.format("%.4f", v) or "-" end

function M.section(exp)
  local name = M.task(exp)
  if not name then return nil end
  local rows = {
    "| configuration | size | libtorch's op (median call) | best kernel (median call) | x libtorch | best kernel's rate | final mean reward | samples |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  }
  local gpus = {}
  for _, cfg in ipairs(exp.configs) do
    local y, gpu = cfg.cuda_yardstick, cfg.gpu  -- what session.open_cuda stored
    if gpu and gpu.device then gpus[gpu.device .. (gpu.sm and (" (" .. gpu.sm .. ")") or "")] = true end
    local best = cfg.best
    local x = best and vs_libtorch(best)
    local median = best and best.timings and best.timings.median
    local rate = "-"
    if best then
      local gbps = best.extra and best.extra.gbps
      rate = string.format("%.1f GFLOPS", best.gflops) .. (gbps and string.format(", %.1f GB/s", gbps) or "")
    end
    local size = {}
    for k, v in pairs(y and y.size or {}) do size[#size + 1] = k .. "=" .. v end
    table.sort(size)
    local final = results.final_reward(cfg)
    rows[#rows + 1] = string.format("| %s | %s | %s ms | %s ms | %s | %s | %s | %d |", cfg.name, table.concat(size, ","),
                                    ms(y and y.median_ms), ms(median and median * 1000),
                                    x and string.format("%.3f", x) or "-", rate,
                                    final and string.format("%.2f", final) or "-", cfg.samples)
  end
  local names = {}
  for g in pairs(gpus) do names[#names + 1] = g end
  table.sort(names)
  return table.concat({
    string.format("CUDA task `%s` on %s. A kernel's reward is Eq. 3's with its speed as 100 x libtorch's "
                  .. "median call over its own (100: as fast as libtorch's op; failures keep their "
                  .. "penalties); libtorch's op was timed once when each run started, as the kernels are "
                  .. "(fresh inputs, events around the call, median of the calls). The best kernel is the "
                  .. "fastest confirmed by a second evaluation, at the lower of its two rates.",
                  name, #names > 0 and table.concat(names, ", ") or "an unrecorded GPU"),
    "", table.concat(rows, "\n"), ""}, "\n")
end

return M
