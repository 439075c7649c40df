-- Kernels for cholesky's tests: a plain right-looking factorisation, one that leaves the
-- entries above the diagonal unwritten, one in single precision.
return {
  plain = [[
#include <math.h>
void cholesky(int n, const double *A, double *L) {
  for (long i = 0; i < (long)n * n; ++i) L[i] = A[i];
  for (int k = 0; k < n; ++k) {
    double d = sqrt(L[(long)k * n + k]);
    L[(long)k * n + k] = d;
    for (int i = k + 1; i < n; ++i) L[(long)i * n + k] /= d;
    for (int j = k + 1; j < n; ++j)
      for (int i = j; i < n; ++i) L[(long)i * n + j] -= L[(long)i * n + k] * L[(long)j * n + k];
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) L[(long)i * n + j] = 0;
}
]],
  off_by_one = [[
#include <math.h>
void cholesky(int n, const double *A, double *L) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = A[(long)i * n + j];
      for (int k = 0; k < j; ++k) s -= L[(long)i * n + k] * L[(long)j * n + k];
      L[(long)i * n + j] = i == j ? sqrt(s) : s / L[(long)j * n + j];
    }
  for (int i = 0; i < n - 1; ++i)
    for (int j = i + 2; j < n; ++j) L[(long)i * n + j] = 0;
}
]],
  single = [[
#include <math.h>
void cholesky(int n, const double *A, double *L) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      float s = A[(long)i * n + j];
      for (int k = 0; k < j; ++k) s -= (float)L[(long)i * n + k] * (float)L[(long)j * n + k];
      L[(long)i * n + j] = i == j ? sqrtf(s) : s / (float)L[(long)j * n + j];
    }
    for (int j = i + 1; j < n; ++j) L[(long)i * n + j] = 0;
  }
}
]],
}
