-- C = A^T B with A k x m, B k x n, row-major: a matrix product whose left factor is read
-- transposed (compute-bound).
return {
  name = "gemm_tn",
  family = "blas3",
  split = "train",
  statement = "Compute C = A^T * B where A is k-by-m, B is k-by-n and C is m-by-n, all stored "
           .. "row-major: C[i*n + j] = sum over p of A[p*m + i] * B[p*n + j].",
  prototype = "void gemm_tn(int m, int n, int k, const double *A, const double *B, double *C)",
  sizes = {
    train = { m = 256, n = 256, k = 256 },
    heldout = { m = 331, n = 277, k = 419 },
    test = { m = 37, n = 23, k = 29 },
  },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    k = { value = "k" },
    A = { count = "k*m" },
    B = { count = "k*n" },
    C = { count = "m*n" },
  },
  flops = "2*m*n*k",
  bytes = "8*(k*m + k*n + m*n)",
  bound = {
    factor = "2*k",
    why = "each C[i][j] is a dot product of length k: in any order (blocked, packed, vector lanes, "
       .. "threads), with or without FMA, its error is at most k u (|A^T||B|)[i][j], the reference's "
       .. "as large again; single precision errs by about 2^-24 relative, far above 2 k u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = cblas_yardsticks(cblas_dgemm_declaration, [[
void gemm_tn(int m, int n, int k, const double *A, const double *B, double *C) {
  cblas_dgemm(101, 112, 111, m, n, k, 1.0, A, m, B, n, 0.0, C, n);  /* row-major, A transposed (k x m, lda = m) */
}
]]),
  reference = [[
void gemm_tn(int m, int n, int k, const double *A, const double *B, double *C) {
  for (long i = 0; i < (long)m * n; ++i) C[i] = 0;
  for (int p = 0; p < k; ++p) {
    const double *a = A + (long)p * m, *b = B + (long)p * n;
    for (int i = 0; i < m; ++i) {
      const double aip = a[i];
      double *c = C + (long)i * n;
      for (int j = 0; j < n; ++j) c[j] += aip * b[j];
    }
  }
}
]],
}
