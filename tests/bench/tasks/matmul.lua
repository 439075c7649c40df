local plain = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = 0;
      for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("k < K;", "k < K - 1;")),
  single = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += (float)A[i * K + k] * (float)B[k * N + j];
      C[i * N + j] = s;
    }
}
]],
}
