local t = require "engine.test"

local sig = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)"

t.test("kernelc.features reads techniques from the syntax tree", function()
  local f = kernelc.features("#include <immintrin.h>\n" .. sig .. [[ {
    /* #pragma omp parallel for */
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j += 8) {
        __m512d a = _mm512_setzero_pd();
        for (int k = 0; k < K; k++) a = _mm512_fmadd_pd(_mm512_set1_pd(A[i*K+k]), _mm512_loadu_pd(&B[k*N+j]), a);
        _mm512_storeu_pd(&C[i*N+j], a);
      }
  }]])
  t.eq(f.techniques, {"simd"})
  t.eq(f.simd.width, 8)
  t.eq(f.openmp.used, false)
  t.eq(f.loop_orders, {"i,j,k"})
  t.eq(kernelc.features("void f( {").error:match("^kernel%.c:1:%d+: error:") ~= nil, true)
end)

t.test("kernelc.compile_check reports status and diagnostics", function()
  local ok = kernelc.compile_check(sig .. " { C[0] = A[0] * B[0]; }", {opt = "O1"})
  t.eq(ok.status, "ok")
  t.eq(ok.diagnostics, "")
  local bad = kernelc.compile_check(sig .. " {\n  C[0] = x;\n}", {front_only = true})
  t.eq(bad.status, "compile_error")
  t.eq(bad.diagnostics, "kernel.c:2:10: error: 'x' undeclared (first use in this function)")
  local lib = kernelc.compile_check("#include <stdio.h>\n" .. sig .. " { puts(\"hi\"); }", {front_only = true})
  t.eq(lib.status, "library_violation")
  t.raises(function() kernelc.compile_check("", {optimize = 3}) end, "optimize")
end)
t.run()
