local plain = [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) A[(long)i * n + j] += alpha * x[i] * y[j];
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < m;", "i < m - 1;")),
  single = [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  float a = (float)alpha;
  for (int i = 0; i < m; ++i) {
    float ax = a * (float)x[i];
    for (int j = 0; j < n; ++j) A[(long)i * n + j] = (float)A[(long)i * n + j] + ax * (float)y[j];
  }
}
]],
}
