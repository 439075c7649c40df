-- The sum of magnitudes sum |x_i| (BLAS dasum): a reduction of n absolute values (memory-bound).
return {
  name = "asum",
  family = "blas1",
  split = "train",
  statement = "Return the sum of the absolute values |x[0]| + |x[1]| + ... + |x[n-1]| of the vector "
           .. "x of length n.",
  prototype = "double asum(int n, const double *x)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 2750011 }, test = { n = 1001 } },
  args = {
    n = { value = "n" },
    x = { count = "n" },
  },
  flops = "n",
  bytes = "8*n",
  roofline = "memory",
  bound = {
    factor = "2*n",
    why = "taking |x[i]| is exact and the terms are all positive, so a sum of n of them in any order "
       .. "(blocked, vector lanes, threads) errs by at most (n - 1) u times the sum; the reference's "
       .. "error is as large again. Single precision rounds the inputs and every partial sum to 24 "
       .. "bits, an error near 2^-24 times the sum, far above 2 n u for every n here.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
double cblas_dasum(int n, const double *x, int incx);
]], [[
double asum(int n, const double *x) { return cblas_dasum(n, x, 1); }
]]),
  reference = [[
#include <math.h>
double asum(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += fabs(x[i]);
  return s;
}
]],
}
