-- The inclusive prefix sum (scan) of n doubles: a loop-carried dependence to break
-- (blocked two-pass or parallel scans; memory-bound when done well).
return {
  name = "prefix_sum",
  family = "scan",
  split = "train",
  statement = "Compute the inclusive prefix sum of the vector x of length n: y[i] = x[0] + x[1] + ... + x[i] "
           .. "for 0 <= i < n.",
  prototype = "void prefix_sum(int n, const double *x, double *y)",
  sizes = { train = { n = 1 << 21 }, heldout = { n = 2999999 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    x = { count = "n" },
    y = { count = "n" },
  },
  flops = "n",
  bytes = "16*n",
  roofline = "memory",
  bound = {
    factor = "2*n",
    why = "y[i] is a sum of i+1 <= n terms: whatever the summation tree (serial, blocked two-pass with "
       .. "block offsets, parallel up/down sweeps), its error is at most n u (x[0..i] magnitudes summed), the "
       .. "reference's as large again; single precision errs by about 2^-25 relative to that sum, far "
       .. "above 2 n u for every size here.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void prefix_sum(int n, const double *x, double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    s += x[i];
    y[i] = s;
  }
}
]],
}
