-- C = L B with L lower triangular m x m, B m x n, row-major (BLAS dtrmm, out of place): a
-- product that skips the zero triangle (compute-bound).
return {
  name = "trmm",
  family = "blas3",
  split = "train",
  statement = "Compute C = L * B where L is an m-by-m lower-triangular matrix, B and C are m-by-n, "
           .. "all stored row-major: C[i*n + j] = sum over p <= i of L[i*m + p] * B[p*n + j]. Only the "
           .. "diagonal and the lower triangle of L (L[i*m + p] with p <= i) may be read: the entries "
           .. "above the diagonal are NaN.",
  prototype = "void trmm(int m, int n, const double *L, const double *B, double *C)",
  sizes = {
    train = { m = 512, n = 256 },
    heldout = { m = 389, n = 311 },
    test = { m = 37, n = 23 },
  },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    L = { count = "m*m", draw = { "lower", n = "m" } },
    B = { count = "m*n" },
    C = { count = "m*n" },
  },
  flops = "m*(m+1)*n",
  bytes = "8*(m*(m+1)//2 + 2*m*n)",
  bound = {
    factor = "2*m",
    why = "each C[i][j] is a dot product of at most m terms: in any order (blocked, packed, vector "
       .. "lanes, threads), with or without FMA, its error is at most m u (|L||B|)[i][j], the "
       .. "reference's as large again; single precision errs by about 2^-24 relative in the diagonal "
       .. "term alone, far above 2 m u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = cblas_lower_left_yardsticks("trmm", "C", "works in place"),
  reference = [[
void trmm(int m, int n, const double *L, const double *B, double *C) {
  for (int i = 0; i < m; ++i) {
    double *c = C + (long)i * n;
    for (int j = 0; j < n; ++j) c[j] = 0;
    for (int p = 0; p <= i; ++p) {
      const double l = L[(long)i * m + p];
      const double *b = B + (long)p * n;
      for (int j = 0; j < n; ++j) c[j] += l * b[j];
    }
  }
}
]],
}
