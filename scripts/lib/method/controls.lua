-- The timing noise of the node a run measures on: a fixed control kernel evaluated again
-- and again with the run's own evaluation options, so the report can say how far apart
-- two kernels must read before the difference means something there.
--
--   local c = controls.measure(deps.bench, bench_opts)  -- {gflops = {...}, median, cov, ...}
--   controls.noisy(c)                                   -- the CoV is above controls.bound
local controls = {}

controls.bound = 0.05  -- the CoV above which a report warns
controls.evaluations = 5

-- A cache-blocked i-k-j loop over OpenMP threads: plain C, so every machine and back end
-- compiles it, and parallel, so it meets what the node's cores do to the kernels.
controls.name = "blocked i-k-j OpenMP kernel"
controls.source = [[
#include <omp.h>
#define BS 64
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M * N; i++) C[i] = 0.0;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int ii = 0; ii < M; ii += BS)
        for (int jj = 0; jj < N; jj += BS)
            for (int kk = 0; kk < K; kk += BS)
                for (int i = ii; i < ii + BS && i < M; i++)
                    for (int k = kk; k < kk + BS && k < K; k++) {
                        double a = A[i * K + k];
                        for (int j = jj; j < jj + BS && j < N; j++) C[i * N + j] += a * B[k * N + j];
                    }
}
]]

local function sorted(xs)
  local c = {table.unpack(xs)}
  table.sort(c)
  return c
end

-- The summary of a list of GFLOPS: median, CoV, and the slowest against the median.
function controls.summary(gflops)
  local n = #gflops
  if n == 0 then return nil end
  local s, sum = sorted(gflops), 0
  for _, g in ipairs(gflops) do sum = sum + g end
  local mean = sum / n
  local ss = 0
  for _, g in ipairs(gflops) do ss = ss + (g - mean) ^ 2 end
  local median = n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
  return {gflops = gflops, n = n, median = median, cov = n > 1 and math.sqrt(ss / (n - 1)) / mean or 0,
          slowest = median > 0 and median / s[1] or 0, kernel = controls.name}
end

-- Evaluates the control kernel `n` times, one evaluation after another, with the run's
-- options. Nil (and why) when any evaluation is not ok.
function controls.measure(benchmark, bench_opts, n, source)
  local gflops = {}
  for i = 1, n or controls.evaluations do
    local r = benchmark.evaluate(source or controls.source, bench_opts)
    if r.status ~= "ok" then return nil, r.status .. ": " .. tostring(r.message) end
    gflops[i] = r.gflops
  end
  return controls.summary(gflops)
end

function controls.noisy(c)
  return c ~= nil and c.cov ~= nil and c.cov > controls.bound
end

return controls
