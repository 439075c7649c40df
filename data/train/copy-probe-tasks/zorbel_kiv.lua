-- y <- alpha x + y: BLAS-1's update, one pass over two vectors (memory-bound).
return {
  name = "zorbel_kiv",
  family = "blas1",
  split = "train",
  statement = "Compute y = alpha * x + y for vectors x and y of length n.",
  prototype = "void zorbel_kiv(int n, double alpha, const double *x, double *y)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 3000017 }, test = { n = 1000 } },
  args = {
    n = { value = "n" },
    alpha = { draw = "uniform" },
    x = { count = "n" },
    y = { count = "n", role = "inout" },
  },
  flops = "2*n",
  bytes = "24*n",
  roofline = "memory",
  bound = {
    factor = 4,
    why = "y[i] + alpha x[i] is one product and one sum: its error is at most 2u(|alpha x[i]| + |y[i]|) "
       .. "with or without FMA, the reference's as large again; a single-precision result is off by 2^-24.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  yardsticks = cblas_yardsticks([[
void cblas_daxpy(int n, double alpha, const double *x, int incx, double *y, int incy);
]], [[
void zorbel_kiv(int n, double alpha, const double *x, double *y) { cblas_daxpy(n, alpha, x, 1, y, 1); }
]]),
  reference = [[
void zorbel_kiv(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}
]],
}
