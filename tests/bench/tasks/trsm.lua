local plain = [[
void trsm(int m, int n, const double *L, const double *B, double *X) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = B[(long)i * n + j];
      for (int p = 0; p < i; ++p) s -= L[(long)i * m + p] * X[(long)p * n + j];
      X[(long)i * n + j] = s / L[(long)i * m + i];
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < m;", "i < m - 1;")),
  single = [[
void trsm(int m, int n, const double *L, const double *B, double *X) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float s = (float)B[(long)i * n + j];
      for (int p = 0; p < i; ++p) s -= (float)L[(long)i * m + p] * (float)X[(long)p * n + j];
      X[(long)i * n + j] = s / (float)L[(long)i * m + i];
    }
}
]],
}
