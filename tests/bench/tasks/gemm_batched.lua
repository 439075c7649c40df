local plain = [[
void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C) {
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += A[(long)b * m * k + i * k + p] * B[(long)b * k * n + p * n + j];
        C[(long)b * m * n + i * n + j] = s;
      }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("b < batch;", "b < batch - 1;")),
  single = [[
void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C) {
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float s = 0;
        for (int p = 0; p < k; ++p) s += (float)A[(long)b * m * k + i * k + p] * (float)B[(long)b * k * n + p * n + j];
        C[(long)b * m * n + i * n + j] = s;
      }
}
]],
}
