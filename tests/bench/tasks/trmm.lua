local plain = [[
void trmm(int m, int n, const double *L, const double *B, double *C) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p <= i; ++p) s += L[(long)i * m + p] * B[(long)p * n + j];
      C[(long)i * n + j] = s;
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("p <= i;", "p < i;")),
  single = [[
void trmm(int m, int n, const double *L, const double *B, double *C) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p <= i; ++p) s += (float)L[(long)i * m + p] * (float)B[(long)p * n + j];
      C[(long)i * n + j] = s;
    }
}
]],
}
