-- Kernels for conv1d's tests: a plain double loop, one that drops the last filter tap, one
-- in single precision.
local plain = [[
void conv1d(int n, int k, const double *x, const double *w, double *y) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < k; ++j) s += w[j] * x[i + j];
    y[i] = s;
  }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j < k;", "j < k - 1;")),
  single = [[
void conv1d(int n, int k, const double *x, const double *w, double *y) {
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j < k; ++j) s += (float)w[j] * (float)x[i + j];
    y[i] = s;
  }
}
]],
}
