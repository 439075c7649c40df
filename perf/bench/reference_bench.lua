-- OpenBLAS measured fairly: bench.reference (its pool warm, many calls, best and median,
-- the fastest thread count chosen), next to the same library measured
-- by a plain C program in the same run (perf/bench/dgemm_plain.c). Also the cost of the
-- evaluation's checks (stopping the kernel's process, verifying every element of every
-- call, loading the next inputs) and the CoV of repeated evaluations of one kernel.
--
--   build/engine perf/bench/reference_bench.lua [--size=256] [--calls=50] [--repeats=10]
local args = require "engine.args"
local outputs = require "core.outputs"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "OpenBLAS reference, measured through the engine and by a plain C program",
  options = {
    perf.size(256),
    {"warmup", 5, "untimed calls", min = 0},
    {"calls", 50, "timed calls", min = 1},
    perf.repeats(10),
  },
})

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local m = bench.machine()
local problem = {M = opts.size, N = opts.size, K = opts.size}
print(string.format("machine: %s, %d cores, %s, peak %.1f GFLOPS", m.model, m.cores, m.simd, m.peak_gflops))

local median = require("core.stats").median

-- The engine: bench.reference chooses the fastest thread count itself (all cores, then
-- halved while faster), 5 warm-up and `calls` timed calls at each.
local flops = 2 * opts.size ^ 3
local r = bench.reference{problem = problem, warmup = opts.warmup, runs = opts.calls, max_runs = opts.calls}
assert(r.status == "ok", r.message)
for _, trial in ipairs(r.thread_trials) do
  print(string.format("engine   threads %2d: best %7.2f GFLOPS, median %7.2f, CoV %.3f", trial.threads,
                      flops / trial.min * 1e-9, flops / trial.median * 1e-9, trial.cov))
end
local best = {threads = r.options.threads, gflops = flops / r.min * 1e-9, median = flops / r.median * 1e-9}
print(string.format("engine chose %d threads", best.threads))

-- The plain program, at the thread count the engine found fastest.
local exe = os.tmpname()
assert(os.execute(string.format("gcc -O2 %sdgemm_plain.c -o %s -ldl", here, exe)), "cannot build dgemm_plain.c")
local p = assert(io.popen(string.format("OPENBLAS_NUM_THREADS=%d %s %d %d %d", best.threads, exe, opts.size,
                                        opts.warmup, opts.calls)))
local plain = json.decode(p:read("a"))
p:close()
os.remove(exe)
print(string.format("plain C  threads %2d: best %7.2f GFLOPS, median %7.2f", best.threads, plain.best_gflops,
                    plain.median_gflops))
print(string.format("engine / plain: best %.3f, median %.3f", best.gflops / plain.best_gflops,
                    best.median / plain.median_gflops))

-- A good kernel evaluated again and again: the spread of its GFLOPS, and what the checks
-- cost per evaluation (the zygote's time with the kernel's process stopped).
local kernel = outputs.read_text(here .. "ikj_omp_kernel.c")
local gflops, checks, within = {}, {}, {}
for i = 1, opts.repeats do
  local r = bench.evaluate(kernel, {problem = problem})
  assert(r.status == "ok", r.message)
  gflops[i], checks[i], within[i] = r.gflops, r.check_ms / (#r.times + 1), r.cov
end
local mean = 0
for _, g in ipairs(gflops) do mean = mean + g / #gflops end
local var = 0
for _, g in ipairs(gflops) do var = var + (g - mean) ^ 2 end
print(string.format("kernel (ikj, OpenMP): %.2f GFLOPS mean of %d evaluations, CoV across %.3f, "
                    .. "median CoV within one %.3f", mean, #gflops, math.sqrt(var / (#gflops - 1)) / mean,
                    median(within)))
print(string.format("checks per call (stop, verify %d elements, next inputs): median %.3f ms; "
                    .. "the call itself: %.3f ms", opts.size * opts.size, median(checks), flops / mean * 1e-6))
