-- Kernels for prefix_sum's tests: a plain running sum, an exclusive scan (each output one
-- element behind), one in single precision.
return {
  plain = [[
void prefix_sum(int n, const double *x, double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    s += x[i];
    y[i] = s;
  }
}
]],
  off_by_one = [[
void prefix_sum(int n, const double *x, double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    y[i] = s;
    s += x[i];
  }
}
]],
  single = [[
void prefix_sum(int n, const double *x, double *y) {
  float s = 0;
  for (int i = 0; i < n; ++i) {
    s += (float)x[i];
    y[i] = s;
  }
}
]],
}
