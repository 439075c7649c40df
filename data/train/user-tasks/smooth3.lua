-- A user's task: a three-point weighted average along a vector.
return {
  name = "smooth3",
  family = "user",
  split = "train",
  statement = "For a vector x of length n, compute y[i] = 0.25 * x[i-1] + 0.5 * x[i] + 0.25 * x[i+1] "
           .. "for 1 <= i < n-1, and y[0] = x[0], y[n-1] = x[n-1].",
  prototype = "void smooth3(int n, const double *x, double *y)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 3000017 }, test = { n = 1000 } },
  args = { n = { value = "n" }, x = { count = "n" }, y = { count = "n" } },
  flops = "5*n",
  bytes = "16*n",
  roofline = "memory",
  bound = { factor = 8, why = "three products and two sums per element" },
  techniques = { "simd", "omp" },
  reference = [[
void smooth3(int n, const double *x, double *y) {
  y[0] = x[0]; y[n - 1] = x[n - 1];
  for (int i = 1; i < n - 1; ++i) y[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1];
}
]],
}
