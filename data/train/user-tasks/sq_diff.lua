-- A user's task: the squared differences of two vectors.
return {
  name = "sq_diff",
  family = "user",
  split = "train",
  statement = "Compute z[i] = (x[i] - y[i]) * (x[i] - y[i]) for vectors x, y and z of length n.",
  prototype = "void sq_diff(int n, const double *x, const double *y, double *z)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 3000017 }, test = { n = 1000 } },
  args = { n = { value = "n" }, x = { count = "n" }, y = { count = "n" }, z = { count = "n" } },
  flops = "2*n",
  bytes = "24*n",
  roofline = "memory",
  bound = { factor = 4, why = "one difference and one product per element" },
  techniques = { "simd", "omp" },
  reference = [[
void sq_diff(int n, const double *x, const double *y, double *z) {
  for (int i = 0; i < n; ++i) { double d = x[i] - y[i]; z[i] = d * d; }
}
]],
}
