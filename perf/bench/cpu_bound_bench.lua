-- How close honest kernels come to the CPU-time bound: every call's CPU time over its span
-- (busy_threads), divided by the threads the kernel was given. The evaluation refuses a
-- call above 1.02 of it (and 0.1 ms) a time, and a second such call the kernel: this shows
-- the margin that slack leaves, per kernel ("over": calls above it, "refused": evaluations).
--
--   build/engine perf/bench/cpu_bound_bench.lua [--evaluations=30] [--size=256]
local args = require "engine.args"
local outputs = require "core.outputs"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Honest kernels' CPU time against the evaluation's bound (engine.bench)",
  options = {
    {"evaluations", 30, "evaluations of each kernel", min = 1},
    perf.size(256, 16),
    perf.kernels(),
  },
})

local m = bench.machine()
local wide = m.simd == "avx512" and "k04_avx512_rows.c" or "k06_avx2_4x8.c"
local half = math.max(1, m.cores // 2)
local cases = {{wide, m.cores}, {wide, 1}, {"k03_blocked_collapse.c", half}, {"k02_ikj_omp.c", m.cores}}

print(string.format("machine: %s, %d cores; %d^3; %d evaluations a kernel, every call's CPU time / (threads x span)",
                    m.model, m.cores, opts.size, opts.evaluations))
print(string.format("%-34s %7s %8s %8s %8s %6s %8s", "kernel", "calls", "median", "p99", "max", "over", "refused"))
for _, c in ipairs(cases) do
  local name, threads = c[1], c[2]
  local src, ratios, refused, over = outputs.read_text(opts.kernels .. "/" .. name), {}, 0, 0
  for _ = 1, opts.evaluations do
    local r = bench.evaluate(src, {problem = {M = opts.size, N = opts.size, K = opts.size}, threads = threads,
                                   runs = 10, max_runs = 30})
    if r.status == "rejected" and r.message:find("more threads than allowed", 1, true) then refused = refused + 1 end
    over = over + (r.calls_over_cpu_bound or 0)
    for _, b in ipairs(r.busy_threads or {}) do ratios[#ratios + 1] = b / threads end
  end
  table.sort(ratios)
  local function q(p) return ratios[math.max(1, math.ceil(p * #ratios))] or 0 end
  print(string.format("%-34s %7d %8.3f %8.3f %8.3f %6d %8d", name .. " x" .. threads, #ratios, q(0.5), q(0.99),
                      ratios[#ratios] or 0, over, refused))
end
