-- The Euclidean norm ||x||_2: a reduction of n squares and one square root (memory-bound).
return {
  name = "nrm2",
  family = "blas1",
  split = "train",
  statement = "Return the Euclidean norm sqrt(x[0]^2 + x[1]^2 + ... + x[n-1]^2) of the vector x "
           .. "of length n.",
  prototype = "double nrm2(int n, const double *x)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 2500009 }, test = { n = 999 } },
  args = {
    n = { value = "n" },
    x = { count = "n" },
  },
  flops = "2*n",
  bytes = "8*n",
  roofline = "memory",
  bound = {
    factor = "3*n",
    why = "the squares are all positive, so a sum of n of them in any order (blocked, vector lanes, "
       .. "threads), with or without FMA, errs by at most n u times the sum, and the square root halves "
       .. "that relative error and adds u: (n/2 + 1) u ||x||; a scaled (LAPACK-style) update with up "
       .. "to four roundings a step stays within 2 n u ||x||, and the reference's error, (n/2 + 1) u, "
       .. "is added to it. Single precision rounds the inputs and every partial sum to 24 bits, an "
       .. "error near 2^-24 ||x||, far above 3 n u for every n here.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
double cblas_dnrm2(int n, const double *x, int incx);
]], [[
double nrm2(int n, const double *x) { return cblas_dnrm2(n, x, 1); }
]]),
  reference = [[
#include <math.h>
double nrm2(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  return sqrt(s);
}
]],
}
