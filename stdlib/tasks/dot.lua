-- The dot product x . y: a reduction of n products (memory-bound).
return {
  name = "dot",
  family = "blas1",
  split = "train",
  statement = "Return the dot product of the vectors x and y of length n.",
  prototype = "double dot(int n, const double *x, const double *y)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 2999999 }, test = { n = 1000 } },
  args = {
    n = { value = "n" },
    x = { count = "n" },
    y = { count = "n" },
  },
  flops = "2*n",
  bytes = "16*n",
  roofline = "memory",
  bound = {
    factor = "2*n",
    why = "a sum of n products in any order (blocked, vector lanes, threads), with or without FMA, "
       .. "errs by at most n u sum |x[i] y[i]|; the reference's error is as large again. Single "
       .. "precision errs by about 2^-24 times the sum, which is larger for every n here.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);
]], [[
double dot(int n, const double *x, const double *y) { return cblas_ddot(n, x, 1, y, 1); }
]]),
  reference = [[
double dot(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}
]],
}
