local plain = [[
void syrk(int n, int k, const double *A, double *C) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += A[(long)i * k + p] * A[(long)j * k + p];
      C[(long)i * n + j] = s;
      C[(long)j * n + i] = s;
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j <= i;", "j < i;")),
  single = [[
void syrk(int n, int k, const double *A, double *C) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p) s += (float)A[(long)i * k + p] * (float)A[(long)j * k + p];
      C[(long)i * n + j] = s;
      C[(long)j * n + i] = s;
    }
}
]],
}
