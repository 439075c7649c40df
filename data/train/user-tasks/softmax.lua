-- A user's task: the softmax of a vector.
return {
  name = "softmax",
  family = "user",
  split = "train",
  statement = "Compute the softmax of the vector x of length n: y[i] = exp(x[i] - M) / S, where M is the "
           .. "largest x[j] and S = sum over 0 <= j < n of exp(x[j] - M).",
  prototype = "void softmax(int n, const double *x, double *y)",
  sizes = { train = { n = 1 << 20 }, heldout = { n = 3000017 }, test = { n = 1000 } },
  args = { n = { value = "n" }, x = { count = "n" }, y = { count = "n" } },
  flops = "4*n",
  bytes = "16*n",
  roofline = "memory",
  bound = { factor = "2*n + 16", scale = "output",
            why = "each exp is within a few u of its value, S is a sum of n positive terms (error below n u S), "
               .. "and y[i] one division more: y[i] errs by about (n + 4) u y[i], twice that for kernel and reference" },
  techniques = { "simd", "omp" },
  reference = [[
#include <math.h>
void softmax(int n, const double *x, double *y) {
  double m = x[0];
  for (int i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  double s = 0;
  for (int i = 0; i < n; ++i) s += exp(x[i] - m);
  for (int i = 0; i < n; ++i) y[i] = exp(x[i] - m) / s;
}
]],
}
