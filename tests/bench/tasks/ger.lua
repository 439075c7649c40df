return {
  plain = [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) A[(long)i * n + j] += alpha * x[i] * y[j];
}
]],
  off_by_one = [[
void ger(int m, int n, double alpha, const double *x, const double *y, double *A) {
  for (int i = 0; i < m - 1; ++i)
    for (int j = 0; j < n; ++j) A[(long)i * n + j] += alpha * x[i] * y[j];
}
]],
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
