-- A <- A + alpha x y^T with A row-major m x n: BLAS-2's rank-one update, one read and one write
-- of the matrix (memory-bound).
return {
  name = "ger",
  family = "blas2",
  split = "train",
  statement = "Update A = A + alpha * x * y^T where A is an m-by-n matrix stored row-major, "
           .. "A[i*n + j] += alpha * x[i] * y[j], x has m elements and y has n elements; A is both "
           .. "input and output.",
  prototype = "void ger(int m, int n, double alpha, const double *x, const double *y, double *A)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 1777, n = 2503 }, test = { m = 37, n = 23 } },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    alpha = { draw = "uniform" },
    x = { count = "m" },
    y = { count = "n" },
    A = { count = "m*n", role = "inout" },
  },
  flops = "2*m*n",
  bytes = "8*(2*m*n + m + n)",
  roofline = "memory",
  bound = {
    factor = 6,
    why = "each A[i][j] gets two products and one sum, (alpha x[i]) y[j] or alpha (x[i] y[j]), with "
       .. "or without FMA: its error is at most 3 u (|A[i][j]| + |alpha x[i] y[j]|) to first order, the reference's "
       .. "as large again; a single-precision result is off by about 2^-24 relative.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
void cblas_dger(int order, int m, int n, double alpha, const double *x, int incx, const double *y, int incy,
                double *A, int lda);
]], [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  cblas_dger(101, m, n, alpha, x, 1, y, 1, A, n);  /* row-major */
}
]]),
  reference = [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  for (int i = 0; i < m; ++i) {
    const double ax = alpha * x[i];
    double *a = A + (long)i * n;
    for (int j = 0; j < n; ++j) a[j] += ax * y[j];
  }
}
]],
}
