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

t.test("the engine itself parses no kernel: features come with the result", function()
  t.eq(bench.features, nil)
  local broken = bench.evaluate("void matmul_optimized( {", small)
  t.eq(broken.status, "compile_error")
  t.ok(broken.features.error:match("^kernel%.c:1:"), "the child's reading reports its diagnostic")
end)

t.test("gccjit is the default back end", function()
  t.eq(bench.evaluate(omp_kernel, small).backend, "gccjit")
end)

t.run()
