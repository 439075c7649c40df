-- Many small independent products C_b = A_b B_b (batched GEMM): matrices too small for
-- blocking, where the loop over the batch and the small sizes' unrolling matter.
return {
  name = "gemm_batched",
  family = "blas3",
  split = "train",
  statement = "Compute batch independent products C_b = A_b * B_b for b = 0, ..., batch-1, where A_b "
           .. "is m-by-k, B_b is k-by-n and C_b is m-by-n, each row-major and the batch's matrices stored "
           .. "one after another: C[b*m*n + i*n + j] = sum over p of A[b*m*k + i*k + p] * "
           .. "B[b*k*n + p*n + j].",
  prototype = "void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C)",
  sizes = {
    train = { batch = 4096, m = 8, n = 8, k = 8 },
    heldout = { batch = 3001, m = 7, n = 9, k = 5 },
    test = { batch = 37, m = 5, n = 3, k = 7 },
  },
  args = {
    batch = { value = "batch" },
    m = { value = "m" },
    n = { value = "n" },
    k = { value = "k" },
    A = { count = "batch*m*k" },
    B = { count = "batch*k*n" },
    C = { count = "batch*m*n" },
  },
  flops = "2*batch*m*n*k",
  bytes = "8*batch*(m*k + k*n + m*n)",
  bound = {
    factor = "2*k",
    why = "each C_b[i][j] is a dot product of length k: in any order, with or without FMA, its error "
       .. "is at most k u (|A_b||B_b|)[i][j], the reference's as large again; single precision errs "
       .. "by about 2^-24 relative, far above 2 k u.",
  },
  techniques = { "register_blocking", "simd", "omp" },
  yardsticks = cblas_yardsticks(cblas_dgemm_declaration, [[
void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C) {
  for (int b = 0; b < batch; ++b)  /* one row-major dgemm per product */
    cblas_dgemm(101, 111, 111, m, n, k, 1.0, A + (long)b * m * k, k, B + (long)b * k * n, n, 0.0,
                C + (long)b * m * n, n);
}
]], {
    libxsmm = { link = { "xsmm", "openblas" }, source = [[
#include <stddef.h>
#include <stdio.h>
/* libxsmm 1.17 (static libxsmm.a; its BLAS fallback, dgemm_, comes from OpenBLAS) */
typedef void (*libxsmm_dmmfunction)(const double *a, const double *b, double *c, ...);
libxsmm_dmmfunction libxsmm_dmmdispatch(int m, int n, int k, const int *lda, const int *ldb, const int *ldc,
                                        const double *alpha, const double *beta, const int *flags,
                                        const int *prefetch);
void libxsmm_dgemm(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
                   const double *beta, double *c, const int *ldc);
void libxsmm_init(void);
const char *libxsmm_get_target_arch(void);
void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C) {
  /* libxsmm is column-major: row-major C_b = A_b B_b is column-major C_b^T = B_b^T A_b^T, an n x m
     product over k with B_b first. The JIT kernel is looked up (generated on the first call) once a call. */
  const double alpha = 1.0, beta = 0.0;
  libxsmm_dmmfunction f = libxsmm_dmmdispatch(n, m, k, NULL, NULL, NULL, &alpha, &beta, NULL, NULL);
  for (int b = 0; b < batch; ++b) {
    const double *a = A + (long)b * m * k, *bb = B + (long)b * k * n;
    double *c = C + (long)b * m * n;
    if (f) f(bb, a, c);
    else libxsmm_dgemm("N", "N", &n, &m, &k, &alpha, bb, &n, a, &k, &beta, c, &n);
  }
}
void yardstick_init(int threads) { (void)threads; libxsmm_init(); }
const char *yardstick_version(void) {
  static char v[64];
  snprintf(v, sizeof v, "1.17 (%s)", libxsmm_get_target_arch());
  return v;
}
]] },
  }),
  reference = [[
void gemm_batched(int batch, int m, int n, int k, const double *A, const double *B, double *C) {
  for (int b = 0; b < batch; ++b) {
    const double *a = A + (long)b * m * k, *bb = B + (long)b * k * n;
    double *c = C + (long)b * m * n;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += a[i * k + p] * bb[p * n + j];
        c[i * n + j] = s;
      }
  }
}
]],
}
