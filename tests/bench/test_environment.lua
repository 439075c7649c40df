-- The user's OpenMP settings reach no kernel: an engine started from a shell with hostile
-- OMP_* and GOMP_* variables sees the machine's cores, gives kernels the harness's OpenMP
-- environment, and measures an OpenMP kernel at the speed a clean shell gets.
local t = require "engine.test"

local exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local names = {"OMP_PROC_BIND", "OMP_PLACES", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
               "OMP_DYNAMIC", "GOMP_CPU_AFFINITY"}
local hostile = "OMP_PROC_BIND=close OMP_PLACES=cores OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive "
                .. "GOMP_SPINCOUNT=0 OMP_DYNAMIC=true GOMP_CPU_AFFINITY=0"

-- What an engine started with `env` reports: its cores, the kernel's environment and the
-- best GFLOPS of an OpenMP kernel over five evaluations (the best: a core another
-- process holds for a moment halves a 2-core figure; the bug this guards against halves
-- every one).
local function measure(env)
  local script = t.tmpdir() .. "/probe.lua"
  local f = assert(io.open(script, "w"))
  f:write(string.format([[
local src = assert(io.open(%q)):read("a")
local g, env = {}, nil
for i = 1, 5 do
  local r = bench.evaluate(src, {problem = {M = 192, N = 192, K = 192}, runs = 5})
  assert(r.status == "ok", r.message)
  g[i], env = r.gflops, table.concat(r.environment, " ")
end
table.sort(g)
print("cores=" .. bench.machine().cores)
print("env=" .. env)
print("gflops=" .. g[#g])
]], here .. "/../data/kernels/k02_ikj_omp.c"))
  f:close()
  local unset = {}
  for _, n in ipairs(names) do unset[#unset + 1] = "-u " .. n end
  local p = io.popen(string.format("env %s %s %q %q 2>&1", table.concat(unset, " "), env, exe, script))
  local out = p:read("a")
  p:close()
  return {cores = tonumber(out:match("cores=(%d+)")), env = out:match("env=([^\n]*)"),
          gflops = tonumber(out:match("gflops=([%d.e+-]+)")), out = out}
end

t.test("a shell's OpenMP variables change nothing a kernel measures", function()
  -- alternately, twice each: the better of each pair of engines
  local clean, bad = measure(""), measure(hostile)
  local clean2, bad2 = measure(""), measure(hostile)
  clean.gflops = math.max(clean.gflops or 0, clean2.gflops or 0)
  bad.gflops = math.max(bad.gflops or 0, bad2.gflops or 0)
  t.ok(clean.cores and clean.gflops, clean.out)
  t.ok(bad.cores and bad.gflops, bad.out)
  t.eq(bad.cores, clean.cores, "the engine's cores")
  t.eq(bad.env, clean.env, "the kernel's OpenMP environment")
  t.eq(clean.env, string.format("OMP_NUM_THREADS=%d OMP_DYNAMIC=false OMP_PROC_BIND=close OMP_PLACES=cores",
                                clean.cores))
  t.ok(bad.gflops >= 0.7 * clean.gflops,
       string.format("%.2f GFLOPS from the hostile shell against %.2f", bad.gflops, clean.gflops))
end)

t.run()
