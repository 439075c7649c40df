local plain = [[
void gemm_tn(int m, int n, int k, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += A[(long)p * m + i] * B[(long)p * n + j];
      C[(long)i * n + j] = s;
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("p < k;", "p < k - 1;")),
  single = [[
void gemm_tn(int m, int n, int k, const double *A, const double *B, double *C) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int p = 0; p < k; ++p) s += (float)A[(long)p * m + i] * (float)B[(long)p * n + j];
      C[(long)i * n + j] = s;
    }
}
]],
}
