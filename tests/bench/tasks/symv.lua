local plain = [[
void symv(int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j <= i; ++j) s += A[(long)i * n + j] * x[j];
    for (int j = i + 1; j < n; ++j) s += A[(long)j * n + i] * x[j];
    y[i] = s;
  }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j < n;", "j < n - 1;")),
  single = [[
void symv(int n, const double *A, const double *x, double *y) {
  for (int i = 0; i < n; ++i) {
    float s = 0;
    for (int j = 0; j <= i; ++j) s += (float)A[(long)i * n + j] * (float)x[j];
    for (int j = i + 1; j < n; ++j) s += (float)A[(long)j * n + i] * (float)x[j];
    y[i] = s;
  }
}
]],
}
