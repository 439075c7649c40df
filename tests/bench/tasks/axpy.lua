-- Kernels for the axpy task's tests: a plain one, one that misses the last element, one
-- that works in single precision.
return {
  plain = [[
void axpy(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}
]],
  off_by_one = [[
void axpy(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n - 1; ++i) y[i] += alpha * x[i];
}
]],
  single = [[
void axpy(int n, double alpha, const double *x, double *y) {
  float a = (float)alpha;
  for (int i = 0; i < n; ++i) y[i] = (float)y[i] + a * (float)x[i];
}
]],
}
