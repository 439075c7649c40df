-- Kernels for lu_nopiv's tests: a plain Doolittle factorisation, one whose elimination
-- stops a step early, one in single precision; and a hostile one that assumes what the
-- statement does not promise (symmetry: it reads the lower triangle only, eliminates
-- symmetrically at half the flops and takes U = D L^T), right only on symmetric inputs.
return {
  hostile = {
    symmetric = [[
void lu_nopiv(int n, const double *A, double *L, double *U) {
  for (long i = 0; i < (long)n * n; ++i) { L[i] = 0; U[i] = 0; }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) L[(long)i * n + j] = A[(long)i * n + j];
  for (int k = 0; k < n; ++k) {  /* a_ij -= a_ik a_kj / a_kk with a_kj = a_jk: lower only */
    double d = L[(long)k * n + k];
    for (int i = k + 1; i < n; ++i) {
      double l = L[(long)i * n + k] / d;
      for (int j = k + 1; j <= i; ++j) L[(long)i * n + j] -= l * L[(long)j * n + k];
    }
  }
  for (int k = 0; k < n; ++k)
    for (int j = k; j < n; ++j) U[(long)k * n + j] = L[(long)j * n + k];
  for (int k = 0; k < n; ++k) {
    for (int i = k + 1; i < n; ++i) L[(long)i * n + k] /= U[(long)k * n + k];
    L[(long)k * n + k] = 1;
  }
}
]],
  },
  plain = [[
void lu_nopiv(int n, const double *A, double *L, double *U) {
  for (long i = 0; i < (long)n * n; ++i) L[i] = U[i] = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = i; j < n; ++j) {  /* row i of U */
      double s = A[(long)i * n + j];
      for (int k = 0; k < i; ++k) s -= L[(long)i * n + k] * U[(long)k * n + j];
      U[(long)i * n + j] = s;
    }
    L[(long)i * n + i] = 1;
    for (int r = i + 1; r < n; ++r) {  /* column i of L */
      double s = A[(long)r * n + i];
      for (int k = 0; k < i; ++k) s -= L[(long)r * n + k] * U[(long)k * n + i];
      L[(long)r * n + i] = s / U[(long)i * n + i];
    }
  }
}
]],
  off_by_one = [[
void lu_nopiv(int n, const double *A, double *L, double *U) {
  for (long i = 0; i < (long)n * n; ++i) { U[i] = A[i]; L[i] = 0; }
  for (int k = 0; k < n - 2; ++k) {
    L[(long)k * n + k] = 1;
    for (int i = k + 1; i < n; ++i) {
      double l = U[(long)i * n + k] / U[(long)k * n + k];
      L[(long)i * n + k] = l;
      U[(long)i * n + k] = 0;
      for (int j = k + 1; j < n; ++j) U[(long)i * n + j] -= l * U[(long)k * n + j];
    }
  }
}
]],
  single = [[
void lu_nopiv(int n, const double *A, double *L, double *U) {
  for (long i = 0; i < (long)n * n; ++i) { U[i] = (float)A[i]; L[i] = 0; }
  for (int k = 0; k < n; ++k) {
    L[(long)k * n + k] = 1;
    for (int i = k + 1; i < n; ++i) {
      float l = (float)U[(long)i * n + k] / (float)U[(long)k * n + k];
      L[(long)i * n + k] = l;
      U[(long)i * n + k] = 0;
      for (int j = k + 1; j < n; ++j) U[(long)i * n + j] = (float)U[(long)i * n + j] - l * (float)U[(long)k * n + j];
    }
  }
}
]],
}
