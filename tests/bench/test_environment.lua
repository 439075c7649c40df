-- The user's OpenMP settings reach no kernel: an engine started from a shell with hostile
-- OMP_* and GOMP_* variables sees the machine's cores and gives kernels the harness's
-- OpenMP environment. A probe kernel asks the OpenMP runtime it was loaded with what it
-- sees and is right only when that is the harness's environment, so the verdict is the
-- test's evidence; no speed is compared (a 2-core machine's figures are too noisy).
local t = require "engine.test"

local exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local names = {"OMP_PROC_BIND", "OMP_PLACES", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
               "OMP_DYNAMIC", "GOMP_CPU_AFFINITY", "OMP_SCHEDULE", "OMP_THREAD_LIMIT"}
-- OMP_SCHEDULE and OMP_THREAD_LIMIT are variables the harness does not set itself, so the
-- probe seeing their defaults shows the shell's variables are removed, not overwritten.
local hostile = "OMP_PROC_BIND=spread OMP_PLACES=threads OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive "
                .. "GOMP_SPINCOUNT=0 OMP_DYNAMIC=true GOMP_CPU_AFFINITY=0 OMP_SCHEDULE=guided,7 "
                .. "OMP_THREAD_LIMIT=1"

-- A correct ikj product, except that each way the runtime differs from the harness's
-- environment adds its own power of two (times 1e6) to C[0]: the error names what leaked.
local probe_kernel = [[
#include <string.h>
/* declared here: kernel headers need not know the rarer queries (3: close, 3: guided) */
int omp_get_max_threads(void);
int omp_get_dynamic(void);
int omp_get_num_threads(void);
int omp_get_proc_bind(void);
void omp_get_schedule(int *kind, int *chunk);
int omp_get_thread_limit(void);
static double leaks(void) {
  double code = 0;
  if (omp_get_max_threads() != %d) code += 1;
  if (omp_get_dynamic()) code += 2;
  if (omp_get_proc_bind() != 3) code += 4;
  int kind, chunk;
  omp_get_schedule(&kind, &chunk);
  if (kind == 3 && chunk == 7) code += 8;
  int team = 0;
  #pragma omp parallel
  {
    #pragma omp single
    team = omp_get_num_threads();
  }
  if (team != %d) code += 16;
  if (omp_get_thread_limit() < %d) code += 32;
  return code;
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  #pragma omp parallel for schedule(static)
  for (int i = 0; i < M; i++) {
    double *c = &C[i * N];
    memset(c, 0, sizeof(double) * N);
    for (int k = 0; k < K; k++)
      for (int j = 0; j < N; j++) c[j] += A[i * K + k] * B[k * N + j];
  }
  C[0] += 1e6 * leaks();
}
]]

-- What an engine started with `env` reports: its cores, the kernel's environment as the
-- result names it, and the verdict of the probe expecting `threads` (a Lua expression of
-- `cores`) in its runtime and its team.
local function measure(env, threads)
  local script = t.tmpdir() .. "/probe.lua"
  local f = assert(io.open(script, "w"))
  f:write(string.format([[
local cores = bench.machine().cores
local src = string.format(%q, %s, %s, cores)
local r = bench.evaluate(src, {problem = {M = 64, N = 64, K = 64}, runs = 2})
print("cores=" .. cores)
print("env=" .. table.concat(r.environment or {}, " "))
print("status=" .. r.status)
print("leaks=" .. string.format("%%.0f", (tonumber((r.message or ""):match("%%(error ([%%d.e+-]+)")) or 0) / 1e6))
print("message=" .. tostring(r.message))
]], probe_kernel, threads or "cores", threads or "cores"))
  f:close()
  local unset = {}
  for _, n in ipairs(names) do unset[#unset + 1] = "-u " .. n end
  local p = io.popen(string.format("env %s %s %q %q 2>&1", table.concat(unset, " "), env, exe, script))
  local out = p:read("a")
  p:close()
  return {cores = tonumber(out:match("cores=(%d+)")), env = out:match("env=([^\n]*)"),
          status = out:match("status=([%w_]+)"), leaks = tonumber(out:match("leaks=(%d+)")), out = out}
end

t.test("a shell's OpenMP variables reach no kernel's OpenMP runtime", function()
  local clean, bad = measure(""), measure(hostile)
  t.ok(clean.cores and clean.status, clean.out)
  t.ok(bad.cores and bad.status, bad.out)
  t.eq(bad.cores, clean.cores, "the engine's cores")
  t.eq(clean.env, string.format("OMP_NUM_THREADS=%d OMP_DYNAMIC=false OMP_PROC_BIND=close OMP_PLACES=cores",
                                clean.cores))
  t.eq(bad.env, clean.env, "the kernel's OpenMP environment as the result names it")
  t.eq(clean.status, "ok", "the probe from a clean shell: " .. clean.out)
  t.eq(bad.status, "ok", "the probe from the hostile shell (leaks code " .. tostring(bad.leaks) .. "): " .. bad.out)
end)

-- The probe can fail: one expecting a thread more than the harness gives is wrong, so an
-- "ok" above is evidence rather than a probe that cannot see.
t.test("the probe sees a runtime that differs from the harness's", function()
  local r = measure("", "cores + 1")
  t.eq(r.status, "verification_error", r.out)
  t.eq(r.leaks, 17, "threads and team both differ: " .. r.out)
end)

t.run()
