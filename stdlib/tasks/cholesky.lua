-- The Cholesky factorisation A = L L^T of a symmetric positive definite matrix
-- (right-looking or blocked: BLAS-3 updates, a triangular solve per panel).
return {
  name = "cholesky",
  family = "factorisation",
  split = "heldout",
  statement = "Compute the Cholesky factorisation A = L * L^T of the symmetric positive definite n-by-n matrix A "
           .. "(both triangles stored, row-major A[i*n + j]): write the lower triangular L row-major into L "
           .. "(L[i*n + j], positive diagonal) with zeros in every entry above the diagonal (j > i).",
  prototype = "void cholesky(int n, const double *A, double *L)",
  sizes = { heldout = { n = 701 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    A = { count = "n*n", draw = { "spd", n = "n" } },
    L = { count = "n*n" },
  },
  flops = "n*n*n/3",
  bytes = "16*n*n",
  bound = {
    factor = "2*n",
    scale = "output",
    why = "A's off-diagonal entries lie in [-1, 1) and its diagonal in [2n, 2n+1) (condition number below 3), so "
       .. "max|L| is a diagonal entry near sqrt(2n) and |L_ij| < 2/sqrt(2n) off the diagonal. L_jj^2 = A_jj minus "
       .. "j squares whose sum is below 2: in any order (blocked updates included) the partial sums stay within "
       .. "[2n - 2, 2n + 1], so the error is below j u (2n + 1) and L_jj's below (n/2 + 1) u max|L|; the "
       .. "off-diagonal entries and the propagated errors add about 2 u max|L|. Kernel and reference together: "
       .. "(n + 6) u max|L| <= 2 n u max|L| for n >= 6. Single precision errs by about 2^-25 max|L| from rounding "
       .. "A alone, 2^28 u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = {
    lapacke = { link = { "lapacke", "openblas" }, source = [[
#include <stdio.h>
#include <string.h>
int LAPACKE_dpotrf(int matrix_layout, char uplo, int n, double *a, int lda);
void ilaver_(int *major, int *minor, int *patch);
const char *openblas_get_config(void);
void cholesky(int n, const double *A, double *L) {
  /* dpotrf factors in place: the copy of A into L and the zeroing of the upper triangle are part
     of the measured call */
  memcpy(L, A, sizeof(double) * (size_t)n * n);
  LAPACKE_dpotrf(101, 'L', n, L, n);  /* row-major, lower */
  for (long i = 0; i < n; ++i)
    for (long j = i + 1; j < n; ++j) L[i * n + j] = 0.0;
}
const char *yardstick_version(void) {
  static char v[256];
  int major, minor, patch;
  ilaver_(&major, &minor, &patch);
  snprintf(v, sizeof v, "LAPACKE, LAPACK %d.%d.%d (%s)", major, minor, patch, openblas_get_config());
  return v;
}
]] },
  },
  reference = [[
#include <math.h>
void cholesky(int n, const double *A, double *L) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double s = A[(long)i * n + j];
      for (int k = 0; k < j; ++k) s -= L[(long)i * n + k] * L[(long)j * n + k];
      L[(long)i * n + j] = i == j ? sqrt(s) : s / L[(long)j * n + j];
    }
    for (int j = i + 1; j < n; ++j) L[(long)i * n + j] = 0.0;
  }
}
]],
}
