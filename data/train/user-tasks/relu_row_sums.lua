-- A user's task: the row sums of a matrix after a ReLU.
return {
  name = "relu_row_sums",
  family = "user",
  split = "train",
  statement = "Compute the row sums of the m-by-n matrix A stored row-major (A[i*n + j]) after "
           .. "replacing its negative entries by zero: s[i] = max(A[i*n + 0], 0) + ... + max(A[i*n + n-1], 0).",
  prototype = "void relu_row_sums(int m, int n, const double *A, double *s)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 3001, n = 1999 }, test = { m = 37, n = 29 } },
  args = { m = { value = "m" }, n = { value = "n" }, A = { count = "m*n" }, s = { count = "m" } },
  flops = "2*m*n",
  bytes = "8*(m*n + m)",
  roofline = "memory",
  bound = { factor = "2*n", why = "each s[i] is a sum of n non-negative terms in any order" },
  techniques = { "register_blocking", "simd", "omp" },
  reference = [[
void relu_row_sums(int m, int n, const double *A, double *s) {
  for (int i = 0; i < m; ++i) {
    double t = 0;
    for (int j = 0; j < n; ++j) { double a = A[(long)i * n + j]; t += a > 0 ? a : 0; }
    s[i] = t;
  }
}
]],
}
