-- Every CUDA task's straightforward kernel judged at its training size by the path an
-- experiment takes (cuda_tasks.evaluate: bench.cuda_judge, then the rate rule), beside its
-- yardstick, libtorch's op timed alike in the same run: the verdict, the events' median
-- call and its CoV, the speed that median implies against the GPU's nominal peak, libtorch's
-- median and the kernel's speed over it, and the wall time of the whole evaluation
-- (compile, the child's CUDA start, the calls, the reference in double precision and the
-- check). On a machine without CUDA it prints why and stops.
--   engine perf/bench/cuda_tasks_bench.lua [--size=train] [--calls=20]
local cuda_tasks = require("engine.cuda_tasks")
local opts = require("engine.args").parse(arg, {
  description = "every CUDA task's straightforward kernel judged at one size",
  options = {
    {"size", "train", "the size every task runs at", choices = {"test", "train", "heldout"}},
    {"calls", 20, "timed calls an evaluation", min = 1},
  },
})
local info = bench.cuda()
print(json.encode(info))
if not info.available then return end
print(string.format("%-16s %-8s %-26s %10s %6s %12s %8s %12s %6s %10s %9s", "task", "status", "size", "median ms",
                    "CoV", "speed", "of peak", "libtorch ms", "CoV", "x libtorch", "wall s"))
for _, task in ipairs(cuda_tasks.list()) do
  local y = cuda_tasks.yardstick(task.name, opts.size, {warmup = 2, calls = opts.calls})
  local t0 = sys.now()
  local rec = cuda_tasks.evaluate(task.straightforward, {task = task.name, size = opts.size, warmup = 2,
                                                          calls = opts.calls, timeout = 120, yardstick = y})
  local wall = sys.now() - t0
  local size = {}
  for k, v in pairs(rec.size or {}) do size[#size + 1] = k .. "=" .. v end
  table.sort(size)
  if rec.median_ms then
    local memory = task.roofline == "memory"
    local speed = memory and rec.gbps or rec.gflops
    local peak = memory and info.peak_gbps or info.peak_fp32_gflops
    local lt = y.status == "ok" and string.format("%12.4f %5.1f%% %10.2f", y.median_ms, 100 * y.cov,
                                                   rec.vs_yardstick or 0)
      or string.format("%12s %6s %10s", "-", "-", "-")
    print(string.format("%-16s %-8s %-26s %10.4f %5.1f%% %8.1f %s %7.1f%% %s %9.2f", task.name, rec.status,
                        table.concat(size, ","), rec.median_ms, 100 * rec.cov, speed, memory and "GB/s" or "GF  ",
                        100 * speed / peak, lt, wall))
    if y.status ~= "ok" then print("  libtorch's op: " .. y.status .. ": " .. tostring(y.log)) end
  else
    print(string.format("%-16s %-8s %s (%.2f s)", task.name, rec.status, tostring(rec.log), wall))
  end
end
