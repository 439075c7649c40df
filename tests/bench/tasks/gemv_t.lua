local plain = [[
void gemv_t(int m, int n, const double *A, const double *x, double *y) {
  for (int j = 0; j < n; ++j) y[j] = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) y[j] += A[(long)i * n + j] * x[i];
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < m;", "i < m - 1;")),
  single = [[
void gemv_t(int m, int n, const double *A, const double *x, double *y) {
  for (int j = 0; j < n; ++j) {
    float s = 0;
    for (int i = 0; i < m; ++i) s += (float)A[(long)i * n + j] * (float)x[i];
    y[j] = s;
  }
}
]],
}
