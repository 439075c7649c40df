-- The DGEMM yardstick against a plain C program calling the fastest library, measured
-- alternately in one run, and the stability of "x reference" between two configurations.
--
-- Each round: bench.reference on matmul (every yardstick at its best thread count, the
-- fastest by the fastest call: the statistic rewards use), then perf/bench/dgemm_plain.c
-- with each library (OpenBLAS, BLIS where present) at the engine's thread count and at
-- all cores, the best of them. Then "two configurations of one run": a fixed kernel
-- evaluated twice, divided by a reference measured for each (as runs did before a sweep
-- shared one) and by one reference shared by both (as Session:shared_yardstick does).
--
--   build/engine perf/bench/yardstick_bench.lua [--size=256] [--rounds=10]
local args = require "engine.args"
local outputs = require "core.outputs"
local stats = require "core.stats"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "The DGEMM yardstick against a plain C program, and x reference between configurations",
  options = {
    perf.size(256),
    {"rounds", 10, "rounds, each measuring everything once", min = 2},
    {"calls", 20, "timed calls per measurement", min = 3},
  },
})
local median = stats.median
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local m = bench.machine()
print(string.format("machine: %s, %d cores, %s", m.model, m.cores, m.simd))
local flops = 2 * opts.size ^ 3
local size = {M = opts.size, N = opts.size, K = opts.size}

local exe = os.tmpname()
assert(os.execute(string.format("gcc -O2 %sdgemm_plain.c -o %s -ldl", here, exe)), "cannot build dgemm_plain.c")
local function plain(lib, threads)
  local env = lib == "openblas" and "OPENBLAS_NUM_THREADS" or "BLIS_NUM_THREADS"
  local so = lib == "openblas" and "libopenblas.so.0" or "libblis.so.4"
  local p = io.popen(string.format("%s=%d OMP_NUM_THREADS=%d %s %d 5 %d %s 2>/dev/null", env, threads, threads, exe,
                                   opts.size, opts.calls, so))
  local out = p:read("a")
  p:close()
  local ok, j = pcall(json.decode, out)
  return ok and j and j.best_gflops or nil
end

local kernel = outputs.read_text(here .. "ikj_omp_kernel.c")

local function reference()
  local r = bench.reference{task = "matmul", size = size, runs = opts.calls, max_runs = opts.calls, warmup = 5}
  assert(r.status == "ok", r.message)
  return r
end

local ratios, xref_gaps, shared_gaps, engine_all, plain_all = {}, {}, {}, {}, {}
print("round | engine yardstick (library, threads) | plain best (library, threads) | engine / plain | x ref A | x ref B "
      .. "| gap, own references | gap, shared reference")
for round = 1, opts.rounds do
  local r = reference()
  local engine_gflops = flops / r.min * 1e-9
  local best, best_lib, best_threads = 0, "", 0
  for _, lib in ipairs({"openblas", "blis"}) do
    for _, threads in ipairs({r.options.threads, m.cores}) do
      local g = plain(lib, threads)
      if g and g > best then best, best_lib, best_threads = g, lib, threads end
    end
  end
  ratios[round] = engine_gflops / best
  engine_all[round], plain_all[round] = engine_gflops, best
  -- two configurations: each its own reference, then the same kernel
  local ref_a, k_a = reference(), bench.evaluate(kernel, {problem = size})
  local ref_b, k_b = reference(), bench.evaluate(kernel, {problem = size})
  assert(k_a.status == "ok" and k_b.status == "ok", k_a.message .. k_b.message)
  local xa, xb = k_a.gflops / ref_a.gflops, k_b.gflops / ref_b.gflops
  xref_gaps[round] = math.abs(xa / xb - 1)
  shared_gaps[round] = math.abs(k_a.gflops / k_b.gflops - 1)  -- both divided by ref_a
  print(string.format("%5d | %7.1f GFLOPS (%s, %d) | %7.1f GFLOPS (%s, %d) | %.3f | %.3f | %.3f | %.1f%% | %.1f%%",
                      round, engine_gflops, r.library, r.options.threads, best, best_lib, best_threads, ratios[round],
                      xa, xb, 100 * xref_gaps[round], 100 * shared_gaps[round]))
end
os.remove(exe)
local within, close, close_shared = 0, 0, 0
for i = 1, opts.rounds do
  if math.abs(ratios[i] - 1) <= 0.10 then within = within + 1 end
  if xref_gaps[i] < 0.10 then close = close + 1 end
  if shared_gaps[i] < 0.10 then close_shared = close_shared + 1 end
end
print(string.format("engine / plain (fastest calls): median %.3f, %d of %d rounds within 10%%", median(ratios), within,
                    opts.rounds))
print(string.format("over the rounds: engine median %.1f GFLOPS, plain median %.1f, ratio %.3f",
                    median(engine_all), median(plain_all), median(engine_all) / median(plain_all)))
print(string.format("x reference between two configurations, each its own reference: median gap %.1f%%, "
                    .. "%d of %d rounds below 10%%", 100 * median(xref_gaps), close, opts.rounds))
print(string.format("x reference between two configurations, one shared reference: median gap %.1f%%, "
                    .. "%d of %d rounds below 10%%", 100 * median(shared_gaps), close_shared, opts.rounds))
