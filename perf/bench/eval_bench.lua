-- The evaluation's benchmark: throughput of a batch through the sandbox with every back
-- end (against bare gcc compiles of the same sources in the same run; the integrity
-- checks' share shown apart), stability of repeated GFLOPS of one
-- kernel, and GFLOPS of OpenBLAS and of the labelled AVX-512 example kernel.
--
--   build/engine perf/bench/eval_bench.lua [--batch=64] [--repeats=10] [--size=256]
local args = require "engine.args"
local read = require("core.outputs").read_text
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Kernel evaluation benchmark (engine.bench)",
  options = {
    {"batch", 64, "kernels in the throughput batch"},
    perf.repeats(10),
    perf.size(256),
    perf.threads(),
    perf.kernels(),
  },
})

local function stats(xs)
  local n, sum = #xs, 0
  for _, x in ipairs(xs) do sum = sum + x end
  local mean = sum / n
  local var = 0
  for _, x in ipairs(xs) do var = var + (x - mean) ^ 2 end
  local sd = n > 1 and math.sqrt(var / (n - 1)) or 0
  return mean, sd, sd / mean
end

local problem = {M = opts.size, N = opts.size, K = opts.size}
local m = bench.machine()
local threads = opts.threads > 0 and opts.threads or m.cores
local function loadavg()
  local f = io.open("/proc/loadavg")
  local s = f and f:read("l") or "?"
  if f then f:close() end
  return s:match("^(%S+ %S+ %S+)") or s
end
print(string.format("machine: %s, %d cores, %s", m.model, m.cores, table.concat(m.isa, " ")))
print(string.format("peak:    %s", m.peak_formula))
print(string.format("target:  %s", m.march))
print(string.format("problem: %dx%dx%d, threads %d, warm-up 1, runs 3 (up to 10 while the CoV is over 5%%)", opts.size, opts.size, opts.size, threads))
print(string.format("load:    %s (other processes share these cores; figures vary with it)", loadavg()))

-- 1. Throughput: a batch of distinct kernels (cache-blocked OpenMP, one block size each).
local template = read(opts.kernels .. "/k03_blocked_collapse.c")
local sources = {}
for i = 1, opts.batch do
  local bs = 8 * (1 + (i - 1) % 16)
  sources[i] = template:gsub("#define BS 64", "#define BS " .. bs) .. ("\n/* variant %d */\n"):format(i)
end
-- Baseline in the same run: the same sources compiled by bare gcc (no sandbox, no run),
-- as many at a time as there are cores; measured before and after the sandboxed batch
-- and averaged, since other processes' load drifts.
local function bare_gcc()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  for i, s in ipairs(sources) do
    local f = assert(io.open(("%s/k%d.c"):format(dir, i), "w"))
    f:write(s)
    f:close()
  end
  local t = sys.now()
  assert(os.execute(("cd %s && ls k*.c | xargs -P %d -I{} gcc -shared -fPIC -nostartfiles -O3 %s -fopenmp -o {}.so {} -lm")
                    :format(dir, m.cores, m.march)))
  t = sys.now() - t
  os.execute("rm -rf " .. dir)
  return t
end

local gcc_before = bare_gcc()
local measured = {}
for _, backend in ipairs(bench.backends()) do
  local t0 = sys.now()
  local results = bench.evaluate_batch(sources, {problem = problem, threads = threads, backend = backend})
  measured[#measured + 1] = {backend = backend, wall = sys.now() - t0, results = results}
end
local gcc_wall = (gcc_before + bare_gcc()) / 2
print(string.format("\nbaseline: bare gcc of the same sources, %d at a time: %.2f s, %.2f kernels/s",
                    m.cores, gcc_wall, opts.batch / gcc_wall))
for _, run in ipairs(measured) do
  local ok, compile_ms, run_s, check_ms, calls = 0, 0, 0, 0, 0
  for _, r in ipairs(run.results) do
    if r.status == "ok" then ok = ok + 1 end
    compile_ms = compile_ms + r.compile_ms
    check_ms = check_ms + (r.check_ms or 0)
    calls = calls + (r.times and #r.times + 1 or 0)
    if r.run_start then run_s = run_s + (r.run_end - r.run_start) end
  end
  local wall = run.wall
  print(string.format("%-7s batch of %d: %.2f s, %.2f kernels/s (%d ok); compile %.0f ms/kernel; run phases %.2f s "
                      .. "in all (serialised, %.0f ms/kernel, %.1f calls/kernel)", run.backend, opts.batch, wall,
                      opts.batch / wall, ok, compile_ms / opts.batch, run_s, 1000 * run_s / opts.batch,
                      calls / opts.batch))
  print(string.format("        the integrity checks (stop, verify every element, next inputs): %.1f ms/kernel, "
                      .. "%.1f%% of the batch", check_ms / opts.batch, 100 * check_ms / 1000 / wall))
  print(string.format("        evaluation rate / bare-compile rate %.2f; without the serialised run phases %.2f",
                      gcc_wall / wall, gcc_wall / (wall - run_s)))
end

-- 2. Stability: one kernel evaluated again and again.
local k04 = read(opts.kernels .. "/k04_avx512_rows.c")
local g, within = {}, {}
for i = 1, opts.repeats do
  local r = bench.evaluate(k04, {problem = problem, threads = threads})
  assert(r.status == "ok", r.message)
  g[i] = r.gflops
  local _, _, cv = stats(r.times)
  within[i] = cv
end
local mean, sd, cv = stats(g)
local within_mean = stats(within)
print(string.format("\nk04_avx512_rows x %d evaluations: %.2f GFLOPS mean, sd %.2f, CV %.1f%% (CV of the 3 runs inside one evaluation: %.1f%% on average)",
                    opts.repeats, mean, sd, 100 * cv, 100 * within_mean))

-- 2b. The clocks of the same calls: the kernel process's own (what the reward believed
-- before, within 5% of the harness's), the harness's less its round trip, and the
-- reward's (the larger of the two). One set of calls, so the spreads compare as they are.
do
  local flops = 2.0 * problem.M * problem.N * problem.K
  local by = {own = {}, harness = {}, reward = {}}
  local rtts, per_call = {}, {}
  for i = 1, opts.repeats do
    local r = bench.evaluate(k04, {problem = problem, threads = threads})
    assert(r.status == "ok", r.message)
    local own, harness = {}, {}
    for c = 1, #r.times do
      own[c] = r.kernel_times[c]
      harness[c] = math.max(r.harness_times[c] - r.round_trip, 1e-9)
      per_call[#per_call + 1] = r.harness_times[c] - r.kernel_times[c]
    end
    -- GFLOPS by the mean of the calls, as the reward
    by.own[i], by.harness[i] = flops / stats(own) * 1e-9, flops / stats(harness) * 1e-9
    by.reward[i] = flops / stats(r.times) * 1e-9  -- the times the reward counts, by the same mean
    rtts[i] = r.round_trip
  end
  for _, name in ipairs{"own", "harness", "reward"} do
    local m, s, v = stats(by[name])
    print(string.format("  clock %-8s %.2f GFLOPS mean over %d evaluations, CV %.1f%%", name, m, opts.repeats, 100 * v))
  end
  local rtt = stats(rtts)
  local gap = stats(per_call)
  print(string.format("  per call: round trip %.1f us (subtracted), harness minus kernel clock %.1f us",
                      1e6 * rtt, 1e6 * gap))
end

-- 3. The reference and the example kernel, measured the same way.
local refs = {}
for i = 1, opts.repeats do refs[i] = bench.reference{problem = problem, threads = threads}.gflops end
local ref_mean, ref_sd, ref_cv = stats(refs)
print(string.format("OpenBLAS cblas_dgemm x %d: %.2f GFLOPS mean, sd %.2f, CV %.1f%%", opts.repeats, ref_mean, ref_sd, 100 * ref_cv))
print(string.format("k04_avx512_rows / OpenBLAS: %.2f;  k04 / measured peak: %.3f;  OpenBLAS / measured peak: %.3f",
                    mean / ref_mean, mean / m.measured_peak_gflops, ref_mean / m.measured_peak_gflops))
print(string.format("load:    %s at the end", loadavg()))
