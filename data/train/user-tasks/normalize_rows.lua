-- A user's task: every row of a matrix scaled to unit Euclidean length.
return {
  name = "normalize_rows",
  family = "user",
  split = "train",
  statement = "Scale every row of the m-by-n matrix A (row-major, A[i*n + j]) to unit Euclidean length: "
           .. "B[i*n + j] = A[i*n + j] / sqrt(A[i*n + 0]^2 + ... + A[i*n + n-1]^2).",
  prototype = "void normalize_rows(int m, int n, const double *A, double *B)",
  sizes = { train = { m = 2048, n = 2048 }, heldout = { m = 3001, n = 1999 }, test = { m = 37, n = 29 } },
  args = { m = { value = "m" }, n = { value = "n" }, A = { count = "m*n" }, B = { count = "m*n" } },
  flops = "4*m*n",
  bytes = "16*m*n",
  roofline = "memory",
  bound = { factor = "2*n + 16", scale = "output",
            why = "a row's sum of n squares errs by at most (n + 1) u times itself, its square root by half that "
               .. "and one u more, the division one u: each B entry within about (n/2 + 3) u of its value, which "
               .. "is at most 1, twice that for kernel and reference" },
  techniques = { "register_blocking", "simd", "omp" },
  reference = [[
#include <math.h>
void normalize_rows(int m, int n, const double *A, double *B) {
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += A[(long)i * n + j] * A[(long)i * n + j];
    const double r = sqrt(s);
    for (int j = 0; j < n; ++j) B[(long)i * n + j] = A[(long)i * n + j] / r;
  }
}
]],
}
