-- The measured FP64 peak: the loop runs at the ISA the target allows, the figure is cached
-- per machine with its date, and no library reads above it. Run twice: on this machine
-- as it is, and as a machine without AVX-512 (ENGINE_TARGET=x86-64-v3).
local t = require "engine.test"

local m = bench.machine()
local forced = os.getenv("ENGINE_TARGET")

t.test("bench.machine() has a measured peak beside the nominal one", function()
  t.ok(m.measured_peak_gflops > 0, m.measured_peak_gflops)
  t.ok(m.peak_gflops > 0)
  t.ok(m.measured_peak_date:match("^%d%d%d%d%-%d%d%-%d%d$"), m.measured_peak_date)
  t.contains(m.measured_peak_method, m.simd)
  if forced == "x86-64-v3" then t.eq(m.simd, "avx2") end
end)

t.test("a measurement runs the loop of the target's widest vectors on every CPU", function()
  local p = bench.measure_peak()
  t.eq(p.isa, m.simd)
  t.eq(p.cpus, m.cores)
  t.eq(p.fma, m.simd == "avx512" or m.simd == "avx2")
  t.ok(p.per_cpu_gflops > 0 and p.per_cpu_gflops * p.cpus <= p.gflops * (1 + 1e-9), p.per_cpu_gflops)
  -- two FLOPs per lane per FMA, at most two FMA pipes, and no CPU above 7 GHz
  local lanes = ({avx512 = 8, avx2 = 4, avx = 4, sse2 = 2})[p.isa]
  t.ok(p.per_cpu_gflops <= lanes * 2 * 2 * 7, "no CPU issues that many FLOPs a cycle")
end)

t.test("the peak is cached per machine with its date, and an unreadable cache is measured again", function()
  local dir = t.tmpdir() .. "/cache"
  local first = bench.measure_peak(dir)
  t.eq(first.from_cache, false)
  t.ok(sys.exists(first.cache_file), first.cache_file)
  t.contains(first.cache_file, m.simd)
  local again = bench.measure_peak(dir)
  t.eq(again.from_cache, true)
  t.eq(again.gflops, first.gflops)
  t.eq(again.date, first.date)
  local f = assert(io.open(first.cache_file, "w"))
  f:write("{ not json")
  f:close()
  local mended = bench.measure_peak(dir)
  t.eq(mended.from_cache, false)
  t.eq(bench.measure_peak(dir).from_cache, true)
end)

t.test("the memory bandwidth is measured by a triad on every CPU and cached like the peak", function()
  t.ok(m.measured_bandwidth_gbps > 0, m.measured_bandwidth_gbps)
  t.contains(m.measured_bandwidth_method, "triad")
  local dir = t.tmpdir() .. "/cache"
  local first = bench.measure_bandwidth(dir)
  t.eq(first.from_cache, false)
  t.eq(first.cpus, m.cores)
  -- no machine moves less than 0.5 GB/s or more than 10 TB/s through its cores
  t.ok(first.gbps > 0.5 and first.gbps < 1e4, first.gbps)
  t.ok(sys.exists(first.cache_file), first.cache_file)
  local again = bench.measure_bandwidth(dir)
  t.eq(again.from_cache, true)
  t.eq(again.gbps, first.gbps)
  local f = assert(io.open(first.cache_file, "w"))
  f:write("[]")
  f:close()
  t.eq(bench.measure_bandwidth(dir).from_cache, false)
end)

t.test("OpenBLAS's fastest call reads below the measured peak", function()
  if forced then
    -- OpenBLAS picks its own kernels whatever the target: on a CPU whose AVX-512 is
    -- twice its AVX2, it may beat a peak measured with AVX2. Nothing to compare here.
    t.eq(m.target, forced)
    return
  end
  local ref = bench.reference{problem = {M = 256, N = 256, K = 256}, runs = 5}
  t.eq(ref.status, "ok", ref.message)
  local fastest = 2 * 256 ^ 3 / ref.min * 1e-9
  t.ok(fastest <= m.measured_peak_gflops,
       string.format("OpenBLAS %.1f GFLOPS above the measured peak %.1f", fastest, m.measured_peak_gflops))
end)

t.run()
