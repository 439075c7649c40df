-- y <- A^T x with A row-major m x n: BLAS-2's transposed product, every output a column's dot
-- product, read across rows (memory-bound).
return {
  name = "gemv_t",
  family = "blas2",
  split = "train",
  statement = "Compute y = A^T * x where A is an m-by-n matrix stored row-major (A[i*n + j]), x has "
           .. "m elements and y has n elements: y[j] = sum over i of A[i*n + j] * x[i].",
  prototype = "void gemv_t(int m, int n, const double *A, const double *x, double *y)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 2999, n = 1801 }, test = { m = 37, n = 23 } },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    A = { count = "m*n" },
    x = { count = "m" },
    y = { count = "n" },
  },
  flops = "2*m*n",
  bytes = "8*(m*n + m + n)",
  roofline = "memory",
  bound = {
    factor = "2*m",
    why = "each y[j] is a sum of m products: in any order (row by row as axpy updates, blocked, "
       .. "vector lanes, threads), with or without FMA, its error is at most m u (|A^T||x|)[j], the "
       .. "reference's as large again; single precision errs by about 2^-24 relative, far above 2 m u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
void cblas_dgemv(int order, int trans, int m, int n, double alpha, const double *A, int lda,
                 const double *x, int incx, double beta, double *y, int incy);
]], [[
void gemv_t(int m, int n, const double *A, const double *x, double *y) {
  cblas_dgemv(101, 112, m, n, 1.0, A, n, x, 1, 0.0, y, 1);  /* row-major, transposed: y = A^T x */
}
]]),
  reference = [[
void gemv_t(int m, int n, const double *A, const double *x, double *y) {
  for (int j = 0; j < n; ++j) y[j] = 0;
  for (int i = 0; i < m; ++i) {
    const double xi = x[i];
    const double *a = A + (long)i * n;
    for (int j = 0; j < n; ++j) y[j] += a[j] * xi;
  }
}
]],
}
