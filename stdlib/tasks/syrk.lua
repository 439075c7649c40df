-- C = A A^T with A n x k row-major (BLAS dsyrk, full output): a product with itself whose
-- result is symmetric, so half of it can be mirrored (compute-bound).
return {
  name = "syrk",
  family = "blas3",
  split = "train",
  statement = "Compute C = A * A^T where A is n-by-k stored row-major (A[i*k + p]) and C is n-by-n "
           .. "stored row-major: C[i*n + j] = sum over p of A[i*k + p] * A[j*k + p]. Write every "
           .. "element of C, both triangles.",
  prototype = "void syrk(int n, int k, const double *A, double *C)",
  sizes = {
    train = { n = 512, k = 256 },
    heldout = { n = 433, k = 301 },
    test = { n = 37, k = 23 },
  },
  args = {
    n = { value = "n" },
    k = { value = "k" },
    A = { count = "n*k" },
    C = { count = "n*n" },
  },
  flops = "n*(n+1)*k",
  bytes = "8*(n*k + n*n)",
  bound = {
    factor = "2*k",
    why = "each C[i][j] is a dot product of length k: in any order (blocked, packed, vector lanes, "
       .. "threads), with or without FMA, its error is at most k u (|A||A^T|)[i][j], and a mirrored "
       .. "C[j][i] is the same sum; the reference's error is as large again. Single precision errs by "
       .. "about 2^-24 relative, far above 2 k u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = cblas_yardsticks([[
void cblas_dsyrk(int order, int uplo, int trans, int n, int k, double alpha, const double *A, int lda,
                 double beta, double *C, int ldc);
]], [[
void syrk(int n, int k, const double *A, double *C) {
  cblas_dsyrk(101, 122, 111, n, k, 1.0, A, k, 0.0, C, n);  /* row-major: the lower triangle of A A^T */
  for (long i = 0; i < n; ++i)  /* dsyrk writes one triangle: mirroring the upper one is part of the measured call */
    for (long j = i + 1; j < n; ++j) C[i * n + j] = C[j * n + i];
}
]], nil, cblas_dgemm_declaration),
  reference = [[
void syrk(int n, int k, const double *A, double *C) {
  for (int i = 0; i < n; ++i) {
    const double *a = A + (long)i * k;
    for (int j = 0; j < n; ++j) {
      const double *b = A + (long)j * k;
      double s = 0;
      for (int p = 0; p < k; ++p) s += a[p] * b[p];
      C[(long)i * n + j] = s;
    }
  }
}
]],
}
