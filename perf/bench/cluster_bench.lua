-- Benchmark workers over MPI: kernels per second for one batch evaluated by the engine in
-- one process (the baseline, measured in the same run) and by 1, 2, 4 worker ranks that
-- split this machine's cores between them (each worker pinned to its share).
--
--   build/engine perf/bench/cluster_bench.lua [--kernels=512] [--workers=1,2,4] [--size=256]
--
-- The kernels are kernelgen's (correct, varied techniques, this machine's vector ISA),
-- each evaluated as the paper does: one warm-up and three timed calls. Needs mpirun on
-- the PATH (or --mpirun=PATH); runs as root with Open MPI's permission variables set.
local args = require "engine.args"
local kernelgen = require "kernelgen"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Kernels per second over MPI benchmark workers",
  options = {
    {"kernels", 512, "kernels in the batch", min = 1},
    {"workers", "1,2,4", "worker counts to measure, comma-separated"},
    perf.size(256),
    {"seed", 7, "kernelgen's seed"},
    {"mpirun", "mpirun", "the MPI launcher"},
    {"child", "", "internal: evaluate the batch in FILE as rank 0 and write the figures"},
  },
})

local eval_opts = {problem = {M = opts.size, N = opts.size, K = opts.size}, warmup = 1, runs = 3,
                   max_runs = 3}

local function evaluate(sources)
  local t0 = sys.now()
  local rs = bench.evaluate_batch(sources, eval_opts)
  local seconds = sys.now() - t0
  local counts, nodes = {}, {}
  local failures = {}
  for i, r in ipairs(rs) do
    counts[r.status] = (counts[r.status] or 0) + 1
    if r.node then nodes[r.node] = (nodes[r.node] or 0) + 1 end
    if r.status ~= "ok" and #failures < 3 then
      failures[#failures + 1] = {kernel = i, status = r.status, node = r.node, message = r.message}
    end
  end
  return {seconds = seconds, rate = #sources / seconds, counts = counts, nodes = nodes, failures = failures}
end

if opts.child ~= "" then
  local job = json.read(opts.child)
  local figures = evaluate(job.sources)
  figures.workers = {}
  for _, w in ipairs(cluster.workers()) do
    figures.workers[#figures.workers + 1] = {rank = w.rank, cores = w.machine.cores, kernels = w.kernels,
                                             busy_seconds = w.busy_seconds, alive = w.alive}
  end
  json.write(job.out, figures)
  return
end

local m = bench.machine()
local isa = m.simd == "avx512" and "avx512" or "avx2"
local rng = kernelgen.rng(opts.seed)
local sources = {}
for i = 1, opts.kernels do
  sources[i] = kernelgen.kernel(rng, {isa = isa}).code .. "\n// kernel " .. i .. "\n"
end

local function counts_text(c)
  local keys = {}
  for k in pairs(c) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. " " .. c[k] end
  return table.concat(parts, ", ")
end

print(string.format("machine: %s, %d cores, %s; %d kernels at %d^3, 1 warm-up + 3 timed calls each",
                    m.model, m.cores, m.simd, opts.kernels, opts.size))
-- The baseline is measured before and after the workers (the machine drifts; the ratios
-- are against the mean of the two).
local function baseline(when)
  local b = evaluate(sources)
  print(string.format("one process (%2d cores), %s: %7.1f s, %6.2f kernels/s  [%s]", m.cores, when, b.seconds,
                      b.rate, counts_text(b.counts)))
  return b
end
local base = baseline("first")

local dir = os.tmpname()
os.remove(dir)
sys.mkdir(dir)
json.write(dir .. "/job.json", {sources = sources, out = dir .. "/figures.json"})
local script = debug.getinfo(1, "S").source:sub(2)
local results = {}
for w in opts.workers:gmatch("%d+") do
  local n = tonumber(w)
  os.remove(dir .. "/figures.json")
  local cmd = string.format("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %s --oversubscribe "
                            .. "--bind-to none -np %d %q %q --child=%q 2>&1", opts.mpirun, n + 1, arg[-1] or "engine",
                            script, dir .. "/job.json")
  local pipe = io.popen(cmd)
  local log = pipe:read("a")
  local ok = pipe:close()
  local f = ok and sys.exists(dir .. "/figures.json") and json.read(dir .. "/figures.json")
  if not f then
    print(string.format("%d workers: failed\n%s", n, log))
  else
    local cores = {}
    for _, wk in ipairs(f.workers) do cores[#cores + 1] = tostring(wk.cores) end
    results[#results + 1] = {n = n, cores = table.concat(cores, "+"), f = f}
  end
end
local again = baseline("last ")
local rate = (base.rate + again.rate) / 2
for _, r in ipairs(results) do
  print(string.format("%d worker%s (%-8s cores)   : %7.1f s, %6.2f kernels/s, %.2fx one process  [%s]", r.n,
                      r.n == 1 and " " or "s", r.cores, r.f.seconds, r.f.rate, r.f.rate / rate,
                      counts_text(r.f.counts)))
end
-- A kernel that fails in one layout and not in another needs explaining: show a few.
for _, r in ipairs(results) do
  for _, f in ipairs(r.f.failures or {}) do
    print(string.format("  %d workers: kernel %d %s on %s: %s", r.n, f.kernel, f.status, tostring(f.node),
                        (f.message or ""):sub(1, 300)))
  end
end
