-- y <- A x with A symmetric n x n given by its lower triangle (BLAS dsymv, uplo = L): each
-- stored entry serves two products (memory-bound on half the matrix).
return {
  name = "symv",
  family = "blas2",
  split = "train",
  statement = "Compute y = A * x where A is a symmetric n-by-n matrix stored row-major by its lower "
           .. "triangle: for j <= i, A[i*n + j] holds both entry (i, j) and entry (j, i). Only the "
           .. "diagonal and the lower triangle (A[i*n + j] with j <= i) may be read; the entries above "
           .. "the diagonal are NaN. x and y have n elements.",
  prototype = "void symv(int n, const double *A, const double *x, double *y)",
  sizes = { train = { n = 2048 }, heldout = { n = 2999 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    A = { count = "n*n", draw = { "lower", n = "n" } },
    x = { count = "n" },
    y = { count = "n" },
  },
  flops = "2*n*n",
  bytes = "8*(n*(n+1)//2 + 2*n)",
  roofline = "memory",
  bound = {
    factor = "2*n",
    why = "each y[i] is a sum of n products: in any order (row by row, column by column as axpy "
       .. "updates, blocked, threads), with or without FMA, its error is at most n u (|A||x|)[i], the "
       .. "reference's as large again; single precision errs by about 2^-24 relative in the diagonal "
       .. "term alone, far above 2 n u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = cblas_yardsticks([[
void cblas_dsymv(int order, int uplo, int n, double alpha, const double *A, int lda, const double *x, int incx,
                 double beta, double *y, int incy);
]], [[
void symv(int n, const double *A, const double *x, double *y) {
  cblas_dsymv(101, 122, n, 1.0, A, n, x, 1, 0.0, y, 1);  /* row-major, lower triangle only */
}
]]),
  reference = [[
void symv(int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j <= i; ++j) s += A[(long)i * n + j] * x[j];
    for (int j = i + 1; j < n; ++j) s += A[(long)j * n + i] * x[j];
    y[i] = s;
  }
}
]],
}
