-- A valid 1-D convolution in the deep-learning sense (a correlation: the filter is not
-- flipped) with a short filter: register blocking and vectorisation over outputs.
return {
  name = "conv1d",
  family = "convolution",
  split = "heldout",
  statement = "Compute the valid 1-D correlation of the signal x (n+k-1 elements) with the filter w (k elements, "
           .. "not flipped): y[i] = w[0]*x[i] + w[1]*x[i+1] + ... + w[k-1]*x[i+k-1] for 0 <= i < n.",
  prototype = "void conv1d(int n, int k, const double *x, const double *w, double *y)",
  sizes = { heldout = { n = 1000003, k = 17 }, test = { n = 37, k = 5 } },
  args = {
    n = { value = "n" },
    k = { value = "k" },
    x = { count = "n + k - 1" },
    w = { count = "k" },
    y = { count = "n" },
  },
  flops = "2*n*k",
  bytes = "8*(n + k - 1 + k + n)",
  roofline = "memory",
  bound = {
    factor = "2*k",
    why = "each y[i] is a sum of k products: in any order, with or without FMA, its error is at most "
       .. "k u (|w| * |x|)[i], the reference's as large again; single precision errs by about 2^-24 "
       .. "relative, far above 2 k u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void conv1d(int n, int k, const double *x, const double *w, double *y) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < k; ++j) s += w[j] * x[(long)i + j];
    y[i] = s;
  }
}
]],
}
