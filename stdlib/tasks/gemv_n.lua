-- y <- A x with A row-major m x n: BLAS-2's product, every row a dot product.
return {
  name = "gemv_n",
  family = "blas2",
  split = "train",
  statement = "Compute y = A * x where A is an m-by-n matrix stored row-major (A[i*n + j]), "
           .. "x has n elements and y has m elements.",
  prototype = "void gemv_n(int m, int n, const double *A, const double *x, double *y)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 3001, n = 1999 }, test = { m = 67, n = 45 } },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    A = { count = "m*n" },
    x = { count = "n" },
    y = { count = "m" },
  },
  flops = "2*m*n",
  bytes = "8*(m*n + n + m)",
  roofline = "memory",
  bound = {
    factor = "2*n",
    why = "each y[i] is a sum of n products: error at most n u (|A||x|)[i] in any order, the "
       .. "reference's as large again; single precision errs by 2^-24 relative.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
void cblas_dgemv(int order, int trans, int m, int n, double alpha, const double *A, int lda,
                 const double *x, int incx, double beta, double *y, int incy);
]], [[
void gemv_n(int m, int n, const double *A, const double *x, double *y) {
  cblas_dgemv(101, 111, m, n, 1.0, A, n, x, 1, 0.0, y, 1);  /* row-major, no transpose */
}
]]),
  reference = [[
void gemv_n(int m, int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += A[(long)i * n + j] * x[j];
    y[i] = s;
  }
}
]],
}
