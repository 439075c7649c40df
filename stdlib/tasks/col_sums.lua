-- The sum of each column of a row-major matrix: a reduction across rows, strided for a
-- naive kernel (memory-bound).
return {
  name = "col_sums",
  family = "scan",
  split = "train",
  statement = "Compute the column sums of the m-by-n matrix A stored row-major (A[i*n + j]): "
           .. "s[j] = A[0*n + j] + A[1*n + j] + ... + A[(m-1)*n + j] for 0 <= j < n.",
  prototype = "void col_sums(int m, int n, const double *A, double *s)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 3001, n = 1999 }, test = { m = 37, n = 29 } },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    A = { count = "m*n" },
    s = { count = "n" },
  },
  flops = "m*n",
  bytes = "8*(m*n + n)",
  roofline = "memory",
  bound = {
    factor = "2*m",
    why = "each s[j] is a sum of m terms: in any order (row blocks, vector lanes, threads) its error is at "
       .. "most m u times the sum of the column's magnitudes, the reference's as large again; single "
       .. "precision errs by about 2^-25 relative to that sum, far above 2 m u here.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void col_sums(int m, int n, const double *A, double *s) {
  for (int j = 0; j < n; ++j) {
    double t = 0;
    for (int i = 0; i < m; ++i) t += A[(long)i * n + j];
    s[j] = t;
  }
}
]],
}
