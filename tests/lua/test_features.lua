local t = require "engine.test"

local omp_kernel = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  /* #pragma omp parallel for -- a comment cannot fool the front end */
  #pragma omp parallel for
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}]]

local small = {runs = 1, warmup = 0, problem = {M = 32, N = 32, K = 32}}

t.test("every evaluation result carries the front end's features, whatever compiled it", function()
  for _, backend in ipairs{"gccjit", "gcc"} do
    local opts = {backend = backend}
    for k, v in pairs(small) do opts[k] = v end
    local r = bench.evaluate(omp_kernel, opts)
    t.eq(r.status, "ok", backend)
    t.eq(r.backend, backend)
    t.eq(r.features.techniques, {"omp"}, backend)
  end
end)

t.test("bench.features reads a source without running it", function()
  t.eq(bench.features(omp_kernel).techniques, {"omp"})
  t.ok(bench.features("void f( {").error, "a broken source reports its diagnostic")
end)

t.test("gccjit is the default back end", function()
  t.eq(bench.evaluate(omp_kernel, small).backend, "gccjit")
end)

t.run()
