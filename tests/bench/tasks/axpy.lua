-- Kernels for the axpy task's tests: a plain one, one that misses the last element, one
-- that works in single precision.
local plain = [[
void axpy(int n, double alpha, const double *x, double *y) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < n;", "i < n - 1;")),
  single = [[
void axpy(int n, double alpha, const double *x, double *y) {
  float a = (float)alpha;
  for (int i = 0; i < n; ++i) y[i] = (float)y[i] + a * (float)x[i];
}
]],
}
