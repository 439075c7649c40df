local plain = [[
void gemv_n(int m, int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j < n;", "j <= n;")),
  single = [[
void gemv_n(int m, int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < m; ++i) {
    float s = 0;
    for (int j = 0; j < n; ++j) s += (float)A[i * n + j] * (float)x[j];
    y[i] = s;
  }
}
]],
}
