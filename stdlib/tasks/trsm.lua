-- Solve L X = B with L lower triangular m x m, B and X m x n, row-major (BLAS dtrsm, left,
-- lower, out of place): n right-hand sides at once (compute-bound).
return {
  name = "trsm",
  family = "blas3",
  split = "train",
  statement = "Solve L * X = B for X, where L is an m-by-m lower-triangular matrix stored row-major "
           .. "(L[i*m + p] for p <= i, nonzero diagonal) and B and X are m-by-n stored row-major "
           .. "(B[i*n + j]); write X. Only the diagonal and the lower triangle of L may be read: the "
           .. "entries above the diagonal are NaN.",
  prototype = "void trsm(int m, int n, const double *L, const double *B, double *X)",
  sizes = {
    train = { m = 512, n = 256 },
    heldout = { m = 397, n = 283 },
    test = { m = 37, n = 23 },
  },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    L = { count = "m*m", draw = { "lower", n = "m" } },
    B = { count = "m*n" },
    X = { count = "m*n" },
  },
  flops = "m*m*n",
  bytes = "8*(m*(m+1)//2 + 2*m*n)",
  bound = {
    factor = "10*m",
    scale = "output",
    why = "each column of X is a substitution, backward stable in any order of its inner sums (by "
       .. "rows, by columns, blocked with products of blocks), with or without FMA or a reciprocal of "
       .. "the diagonal: (L + dL) x' = b with |dL| <= m u |L| (to first order). The draw has a "
       .. "diagonal in [1, 2) and off-diagonal row sums below 1/2, so ||L||_inf < 2.5 and "
       .. "||L^-1||_inf <= 2, and each column errs by at most 5 m u times its largest entry, at most "
       .. "X's largest; the reference's error is as large again. Single precision rounds L and B alone "
       .. "by 2^-24 relative, far above 10 m u for every m here.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = cblas_lower_left_yardsticks("trsm", "X", "solves in place"),
  reference = [[
void trsm(int m, int n, const double *L, const double *B, double *X) {
  for (int i = 0; i < m; ++i) {
    double *x = X + (long)i * n;
    for (int j = 0; j < n; ++j) x[j] = B[(long)i * n + j];
    for (int p = 0; p < i; ++p) {
      const double l = L[(long)i * m + p];
      const double *xp = X + (long)p * n;
      for (int j = 0; j < n; ++j) x[j] -= l * xp[j];
    }
    const double d = L[(long)i * m + i];
    for (int j = 0; j < n; ++j) x[j] /= d;
  }
}
]],
}
