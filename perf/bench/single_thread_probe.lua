-- Does the engine time a one-thread kernel as steadily as a plain C program does? Round by
-- round, k04 on one thread at 256^3: the engine's evaluation as the reward makes it (1
-- warm-up, 10 timed calls, up to 30 while their CoV is over 5%, the fastest counts), the
-- engine's evaluation with 40 timed calls, then one fresh timing_floor process (40 calls;
-- its fastest, and the fastest of its first 10). Each round prints the four GFLOPS and the
-- kernel's busy share at its fastest call; the end prints each column's CoV over the rounds.
--
--   build/engine perf/bench/single_thread_probe.lua [--rounds=40 --size=256 --model=DIR]
local args = require "engine.args"
local outputs = require "core.outputs"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "A one-thread kernel timed by the engine and by a plain C program, round by round",
  options = {
    {"rounds", 40, "rounds (each: two evaluations and a floor process)", min = 2},
    perf.size(256, 16),
    perf.held_model(),
  },
})

local n = opts.size
local flops = 2.0 * n * n * n
local m = bench.machine()
local file = m.simd == "avx512" and "k04_avx512_rows.c" or "k06_avx2_4x8.c"
local src = outputs.read_text(engine.root .. "/tests/data/kernels/" .. file)
local held_policy = perf.hold_policy(opts.model)  -- held until the end, not collected meanwhile

local work = os.tmpname()
os.remove(work)
assert(os.execute("mkdir -p " .. work))
assert(os.execute(string.format("gcc -O2 %s/perf/bench/timing_floor.c -o %s/timing_floor -ldl", engine.root, work)))
local f = assert(io.open(work .. "/k.c", "w"))
f:write(src)
f:close()
assert(os.execute(string.format("gcc -shared -fPIC -O3 %s -fopenmp -o %s/k.so %s/k.c -lm", m.march, work, work)))

-- One fresh floor process: GFLOPS by its fastest call and by the fastest of its first 10.
local function floor_run()
  local p = io.popen(string.format("env OMP_NUM_THREADS=1 OMP_PROC_BIND=close OMP_PLACES=cores OMP_DYNAMIC=false "
                                   .. "%s/timing_floor %s/k.so %d 40", work, work, n))
  local out = p:read("a")
  p:close()
  local fastest, calls = out:match("^%S+%s+(%S+)\n([^\n]*)")
  assert(tonumber(fastest), "timing_floor: " .. out)
  local first10, k = math.huge, 0
  for t in calls:gmatch("%S+") do
    k = k + 1
    if k <= 10 then first10 = math.min(first10, tonumber(t)) end
  end
  return flops / tonumber(fastest) * 1e-9, flops / first10 * 1e-9
end

local function fastest(r)
  local best, at = math.huge, 0
  for i, t in ipairs(r.times) do
    if t < best then best, at = t, i end
  end
  local busy = r.busy_threads or {}
  return flops / best * 1e-9, busy[#busy - #r.times + at] or -1
end

local function evaluate(runs, max_runs)
  local r = bench.evaluate_batch({src}, {problem = {M = n, N = n, K = n}, threads = 1, warmup = 1, runs = runs,
                                         max_runs = max_runs})[1]
  assert(r.status == "ok", r.status .. ": " .. (r.message or ""))
  return r
end

print(string.format("machine: %s, %d cores, %s; %s on 1 thread, %d^3, %d rounds%s", m.model, m.cores, m.simd, file, n,
                    opts.rounds, opts.model ~= "" and ("; policy " .. opts.model .. " held") or ""))
print("round   engine calls  busy  engine-40 |  floor floor-10   (GFLOPS by the fastest call)")
local cols = {engine = {}, engine40 = {}, floor = {}, floor10 = {}}
for i = 1, opts.rounds do
  local r = evaluate(10, 30)
  local g, busy = fastest(r)
  local g40 = fastest(evaluate(40, 40))
  local fl, fl10 = floor_run()
  cols.engine[i], cols.engine40[i], cols.floor[i], cols.floor10[i] = g, g40, fl, fl10
  print(string.format("%5d %8.2f %5d %5.3f %10.2f | %6.2f %8.2f", i, g, #r.times, busy, g40, fl, fl10))
end
local function cov(xs)
  local mu, v = 0, 0
  for _, x in ipairs(xs) do mu = mu + x / #xs end
  for _, x in ipairs(xs) do v = v + (x - mu) ^ 2 end
  return math.sqrt(v / (#xs - 1)) / mu
end
print(string.format("CoV over the rounds: engine %.1f%%, engine with 40 calls %.1f%%, floor %.1f%%, floor's first 10 %.1f%%; "
                    .. "engine / floor %.2f", 100 * cov(cols.engine), 100 * cov(cols.engine40), 100 * cov(cols.floor),
                    100 * cov(cols.floor10), cov(cols.engine) / cov(cols.floor)))
os.execute("rm -rf " .. work)
