-- A user's task: the running maximum of a vector.
return {
  name = "running_max",
  family = "user",
  split = "train",
  statement = "Compute the running maximum of the vector x of length n: y[i] = the largest of x[0], ..., x[i], "
           .. "for 0 <= i < n.",
  prototype = "void running_max(int n, const double *x, double *y)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 3000017 }, test = { n = 1000 } },
  args = { n = { value = "n" }, x = { count = "n" }, y = { count = "n" } },
  flops = "n",
  bytes = "16*n",
  roofline = "memory",
  bound = { factor = 0, why = "a maximum is one of its arguments: exact in any order" },
  techniques = { "simd", "omp" },
  reference = [[
void running_max(int n, const double *x, double *y) {
  double m = x[0];
  for (int i = 0; i < n; ++i) { m = x[i] > m ? x[i] : m; y[i] = m; }
}
]],
}
