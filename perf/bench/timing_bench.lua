-- The measurement measured: can the reward tell a kernel from the same kernel doing 5, 10
-- and 20% more work, how steady do fixed control kernels read, what does an evaluation
-- cost; against the floor, a plain C program (timing_floor.c) timing the same kernels
-- in fresh processes. Two paths side by side, evaluated alternately: the old one (1
-- warm-up, 3 timed calls, up to 10 while the CoV is over 5%, the mean of the calls: the
-- reward until 2026-11-25) and the new one (--runs/--max_runs calls, the fastest call:
-- the reward since), with the new path's median beside them (the same calls). The new
-- path evaluates each kernel alone, as the old one did; "batch" evaluates the two kernels
-- of a pair in one batch, where their calls take turns, as a GRPO group's kernels are.
--
--   build/engine perf/bench/timing_bench.lua [--pairs=20] [--repeats=10] [--size=256] [--threads=0]
--     [--runs=10 --max_runs=30 --warmup=1]   (the new path's calls)
--     [--model=models/small]   (a policy loaded as in an experiment, on CUDA when there is one)
local args = require "engine.args"
local median = require("core.stats").median
local read = require("core.outputs").read_text
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "How well the evaluation's timing ranks kernels (engine.bench)",
  options = {
    {"pairs", 20, "evaluations of each kernel of a pair (the kernel, and it with more work)", min = 1},
    {"repeats", 10, "evaluations of each control kernel", min = 2},
    perf.size(256, 16),
    {"threads", 0, "threads of the wide kernels (0: all cores)", min = 0},
    {"warmup", 1, "untimed calls of an evaluation", min = 0},
    {"runs", 10, "timed calls of the new path's evaluations", min = 1},
    {"max_runs", 30, "timed calls at most (more while the CoV is over 5%)", min = 1},
    {"floor_processes", 15, "fresh processes per kernel for the floor", min = 1},
    {"floor_calls", 40, "timed calls per floor process", min = 1},
    perf.kernels(),
    perf.held_model(),
  },
})

-- The engine as an experiment has it: a policy on the GPU (its context, libtorch's threads).
local held_policy, held_device = perf.hold_policy(opts.model)
if held_policy then
  print(string.format("policy: %s loaded on %s and sampled once", opts.model, held_device))
end

local m = bench.machine()
local threads = opts.threads > 0 and opts.threads or m.cores
local n = opts.size
local flops = 2.0 * n * n * n
local paths = {
  old = {problem = {M = n, N = n, K = n}, warmup = 1, runs = 3, max_runs = 10},
  new = {problem = {M = n, N = n, K = n}, warmup = opts.warmup, runs = opts.runs, max_runs = opts.max_runs},
}

local function sorted(xs)
  local c = {table.unpack(xs)}
  table.sort(c)
  return c
end
local function mean(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s / #xs
end
local function cov(xs)
  local mu, v = mean(xs), 0
  for _, x in ipairs(xs) do v = v + (x - mu) ^ 2 end
  return #xs > 1 and math.sqrt(v / (#xs - 1)) / mu or 0
end

-- The ratio of two CoVs over paired rounds (xs[i] and ys[i] measured in the same minutes)
-- with a 95% percentile bootstrap interval: rounds drawn with replacement, 2,000 times.
-- Ten rounds give a CoV a relative standard error of about a quarter, so a ratio is only
-- read as worse or better when its interval leaves 1.
local function cov_ratio(xs, ys)
  local state = math.random(1 << 30)
  math.randomseed(20261126)  -- the same draws in every run
  local ratios = {}
  for b = 1, 2000 do
    local xb, yb = {}, {}
    for i = 1, #xs do
      local k = math.random(#xs)
      xb[i], yb[i] = xs[k], ys[k]
    end
    local cy = cov(yb)
    ratios[b] = cy > 0 and cov(xb) / cy or math.huge
  end
  math.randomseed(state)
  table.sort(ratios)
  local cy = cov(ys)
  return cy > 0 and cov(xs) / cy or math.huge, ratios[51], ratios[1950]
end

-- The figures compared: the old path's mean, the new path's fastest call and median.
local statistics = {"old", "new", "new_median"}
local function read_out(old, new)
  return {old = flops / mean(old.times) * 1e-9, new = flops / sorted(new.times)[1] * 1e-9,
          new_median = flops / median(new.times) * 1e-9, new_calls = #new.times}
end

-- The widest-vector example kernel this machine runs.
local wide_file = m.simd == "avx512" and "k04_avx512_rows.c" or "k06_avx2_4x8.c"
local wide = read(opts.kernels .. "/" .. wide_file)
local blocked = read(opts.kernels .. "/k03_blocked_collapse.c")

-- The kernel doing `extra` more work: the same code again on the first extra x M rows,
-- into memory of its own (results unchanged).
local function with_extra_work(src, extra)
  local renamed = src:gsub("void%s+matmul_optimized%s*%(", "static void base_kernel(", 1)
  return renamed .. string.format([[

#include <stdlib.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static double *scratch;
    base_kernel(A, B, C, M, N, K);
    int rows = (int)(M * %.4f + 0.5);
    if (rows < 1) return;
    if (!scratch) scratch = malloc(sizeof(double) * M * N);
    base_kernel(A, B, scratch, rows, N, K);
}
]], extra)
end

local cost = {old = {}, new = {}, batch = {}}
-- The kernels evaluated in one batch on a path's calls; `cost_to` gets each kernel's share.
local function evaluate_on(srcs, nthreads, path, cost_to)
  local o = {}
  for k, v in pairs(paths[path]) do o[k] = v end
  o.threads = nthreads
  o.share = false  -- a kernel twice in a batch is run twice: the measurement is what is measured
  local t0 = sys.now()
  local rs = bench.evaluate_batch(srcs, o)
  table.insert(cost_to, (sys.now() - t0) / #srcs)
  for _, r in ipairs(rs) do assert(r.status == "ok", r.status .. ": " .. r.message) end
  return rs
end
local function evaluate_path(src, nthreads, path)
  return evaluate_on({src}, nthreads, path, cost[path])[1]
end
-- Both paths, one after the other.
local function evaluate(src, nthreads)
  local old = evaluate_path(src, nthreads, "old")
  return read_out(old, evaluate_path(src, nthreads, "new"))
end
-- The new path's calls on kernels evaluated together: GFLOPS by the fastest call of each.
local function evaluate_together(srcs, nthreads)
  local g = {}
  for i, r in ipairs(evaluate_on(srcs, nthreads, "new", cost.batch)) do g[i] = flops / sorted(r.times)[1] * 1e-9 end
  return g
end

-- The floor: the kernels compiled by gcc and timed by timing_floor in fresh processes.
local work = os.tmpname()
os.remove(work)
assert(os.execute("mkdir -p " .. work))
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
assert(os.execute(string.format("gcc -O2 %q -o %s/timing_floor -ldl", here .. "/timing_floor.c", work)))
local compiled = 0
local function floor_kernel(src)
  compiled = compiled + 1
  local base = string.format("%s/k%d", work, compiled)
  local f = assert(io.open(base .. ".c", "w"))
  f:write(src)
  f:close()
  assert(os.execute(string.format("gcc -shared -fPIC -O3 %s -fopenmp -o %s.so %s.c -lm", m.march, base, base)))
  return base .. ".so"
end
-- One fresh floor process: GFLOPS by its median call, by its fastest, and by the fastest
-- of its first `first` calls (as many as an evaluation of the engine made).
local function floor_run(so, nthreads, first)
  local p = io.popen(string.format("env OMP_NUM_THREADS=%d OMP_PROC_BIND=close OMP_PLACES=cores OMP_DYNAMIC=false "
                                   .. "%s/timing_floor %s %d %d", nthreads, work, so, n, opts.floor_calls))
  local out = p:read("a")
  p:close()
  local med, fastest, calls = out:match("^(%S+)%s+(%S+)\n([^\n]*)")
  assert(tonumber(med) and tonumber(fastest), "timing_floor: " .. out)
  local best_of_first = math.huge
  local k = 0
  for t in calls:gmatch("%S+") do
    k = k + 1
    if k <= (first or opts.floor_calls) then best_of_first = math.min(best_of_first, tonumber(t)) end
  end
  return flops / tonumber(med) * 1e-9, flops / tonumber(fastest) * 1e-9, flops / best_of_first * 1e-9
end
local function floor_median(so, nthreads)
  return (floor_run(so, nthreads))
end

print(string.format("machine: %s, %d cores, %s; measured FP64 peak %.1f GFLOPS", m.model, m.cores, m.simd,
                    m.measured_peak_gflops))
print(string.format("problem: %d^3; wide kernels on %d threads; old path: warm-up 1, runs 3, max_runs 10, mean; "
                    .. "new path: warm-up %d, runs %d, max_runs %d, fastest call", n, threads, opts.warmup,
                    opts.runs, opts.max_runs))

-- 1. Discrimination: the kernel against itself with more work, evaluated alternately.
print(string.format("\n1. %s against itself with more work: share of %d alternate evaluations "
                    .. "ordered right (chance: 50%%)", wide_file, opts.pairs))
print(string.format("   %-6s %8s %8s %10s %8s | %8s %s", "extra", "old", "new", "new median", "batch", "floor",
                    "  true slowdown (floor medians)"))
local base_so = floor_kernel(wide)
for _, extra in ipairs{0.05, 0.10, 0.20} do
  local slower = with_extra_work(wide, extra)
  local slower_so = floor_kernel(slower)
  local right = {old = 0, new = 0, new_median = 0, batch = 0}
  for i = 1, opts.pairs do
    local a, b
    if i % 2 == 1 then
      a = evaluate(wide, threads)
      b = evaluate(slower, threads)
    else
      b = evaluate(slower, threads)
      a = evaluate(wide, threads)
    end
    for _, s in ipairs(statistics) do
      if a[s] > b[s] then right[s] = right[s] + 1 end
    end
    local first_fast = i % 2 == 1
    local g = evaluate_together(first_fast and {wide, slower} or {slower, wide}, threads)
    local fast, slow = g[first_fast and 1 or 2], g[first_fast and 2 or 1]
    if fast > slow then right.batch = right.batch + 1 end
  end
  local floor_right, fa, fb = 0, {}, {}
  for i = 1, opts.floor_processes do
    fa[i] = floor_median(base_so, threads)
    fb[i] = floor_median(slower_so, threads)
    if fa[i] > fb[i] then floor_right = floor_right + 1 end
  end
  print(string.format("   %4.0f%%  %7.0f%% %7.0f%% %9.0f%% %7.0f%% | %7.0f%%   %.3f", 100 * extra,
                      100 * right.old / opts.pairs, 100 * right.new / opts.pairs,
                      100 * right.new_median / opts.pairs, 100 * right.batch / opts.pairs,
                      100 * floor_right / opts.floor_processes, median(fa) / median(fb)))
end

-- 2. Stability: control kernels evaluated again and again.
print(string.format("\n2. control kernels, %d evaluations each: CoV across evaluations (slowest / median)",
                    opts.repeats))
print(string.format("   %-34s %16s %16s %16s %16s | %16s %16s", "kernel", "old", "new", "new median", "2 processes",
                    "floor (median)", "floor (fastest)"))
local half = math.max(1, m.cores // 2)
local controls = {
  {wide_file .. " on " .. threads .. " threads", wide, threads},
  {wide_file .. " on 1 thread", wide, 1},
  {"k03_blocked_collapse.c on " .. half .. " threads", blocked, half},
}
for _, c in ipairs(controls) do
  local name, src, nthreads = table.unpack(c)
  local by = {old = {}, new = {}, new_median = {}, two = {}, floor = {}, floor_fastest = {}, floor_same = {},
              calls = {}}
  local so = floor_kernel(src)
  for i = 1, opts.repeats do
    local g = evaluate(src, nthreads)
    for _, s in ipairs(statistics) do by[s][i] = g[s] end
    -- The fastest call of two processes of the same kernel, their calls taking turns.
    local pair = evaluate_together({src, src}, nthreads)
    by.two[i] = math.max(pair[1], pair[2])
    -- The floor in the same minutes: a fresh process after each round of the engine's, so
    -- that a drift of the node over the run reaches both (measured after all the rounds,
    -- the floor saw a few seconds where the engine saw the whole run).
    -- The floor's fastest of as many calls as that evaluation made reads the same budget.
    by.floor[i], by.floor_fastest[i], by.floor_same[i] = floor_run(so, nthreads, g.new_calls)
    by.calls[i] = g.new_calls
  end
  local function cell(xs)
    return string.format("%5.1f%% (%.2f)", 100 * cov(xs), median(xs) / sorted(xs)[1])
  end
  print(string.format("   %-34s %16s %16s %16s %16s | %16s %16s   median %.1f GFLOPS (floor %.1f)", name,
                      cell(by.old), cell(by.new), cell(by.new_median), cell(by.two), cell(by.floor),
                      cell(by.floor_fastest), median(by.new), median(by.floor)))
  -- The goal "at least as well as the floor", by the reward's statistic on both sides: the
  -- floor's fastest of its 40 calls, and of as many calls as the engine's evaluation made
  -- (the same budget; the fastest of more calls is steadier whoever times them).
  local function compare(label, floor)
    local r, lo, hi = cov_ratio(by.new, floor)
    print(string.format("   %-34s new / %s CoV %.2f, 95%% bootstrap [%.2f, %.2f]: %s", "", label, r, lo, hi,
                        hi <= 1 and "steadier than the floor" or lo > 1 and "noisier than the floor beyond sampling error"
                        or r <= 1 and "no noisier than the floor" or "not distinguishable from the floor"))
  end
  compare(string.format("floor (fastest of %d)", opts.floor_calls), by.floor_fastest)
  compare(string.format("floor (fastest of the engine's %d-%d calls: %.1f%%)", sorted(by.calls)[1],
                        sorted(by.calls)[#by.calls], 100 * cov(by.floor_same)), by.floor_same)
end

-- 3. Cost.
print(string.format("\n3. an evaluation's median wall time (compile, calls, checks): old path %.3f s, new path %.3f s "
                    .. "(%.2fx), a kernel of a two-kernel batch %.3f s (%.2fx)", median(cost.old), median(cost.new),
                    median(cost.new) / median(cost.old), median(cost.batch), median(cost.batch) / median(cost.old)))
os.execute("rm -rf " .. work)
