-- Solve L x = b with L lower triangular n x n (BLAS dtrsv): forward substitution, a chain of
-- dependent dot products (memory-bound on half the matrix).
return {
  name = "trsv",
  family = "blas2",
  split = "train",
  statement = "Solve L * x = b for x, where L is an n-by-n lower-triangular matrix stored row-major "
           .. "(L[i*n + j] for j <= i, nonzero diagonal) and b has n elements; write the solution to x "
           .. "(n elements). Only the diagonal and the lower triangle of L may be read: the entries "
           .. "above the diagonal are NaN.",
  prototype = "void trsv(int n, const double *L, const double *b, double *x)",
  sizes = { train = { n = 2048 }, heldout = { n = 3001 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    L = { count = "n*n", draw = { "lower", n = "n" } },
    b = { count = "n" },
    x = { count = "n" },
  },
  flops = "n*n",
  bytes = "8*(n*(n+1)//2 + 2*n)",
  roofline = "memory",
  bound = {
    factor = "10*n",
    scale = "output",
    why = "substitution in any order of its inner sums (by rows, by columns, blocked), with or without "
       .. "FMA or a reciprocal of the diagonal, is backward stable: (L + dL) x' = b with |dL| <= n u |L| "
       .. "(to first order). The draw has a diagonal in [1, 2) and off-diagonal row sums below 1/2, "
       .. "so ||L||_inf < 2.5 and ||L^-1||_inf <= 2, and ||x' - x||_inf <= 5 n u ||x||_inf; the "
       .. "reference's error is as large again. Single precision rounds L and b alone by 2^-24 "
       .. "relative, far above 10 n u for every n here.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd" },
  yardsticks = cblas_yardsticks([[
#include <string.h>
void cblas_dtrsv(int order, int uplo, int trans, int diag, int n, const double *A, int lda, double *x, int incx);
]], [[
void trsv(int n, const double *L, const double *b, double *x) {
  memcpy(x, b, sizeof(double) * (size_t)n);  /* dtrsv solves in place: the copy of b is part of the measured call */
  cblas_dtrsv(101, 122, 111, 131, n, L, n, x, 1);  /* row-major, lower, no transpose, non-unit diagonal */
}
]]),
  reference = [[
void trsv(int n, const double *L, const double *b, double *x) {
  for (int i = 0; i < n; ++i) {
    const double *l = L + (long)i * n;
    double s = b[i];
    for (int j = 0; j < i; ++j) s -= l[j] * x[j];
    x[i] = s / l[i];
  }
}
]],
}
