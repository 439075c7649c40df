-- B <- A^T out of place: pure data movement whose naive form strides through memory
-- (cache-blocking territory); exact.
return {
  name = "transpose",
  family = "transpose",
  split = "train",
  statement = "Write the transpose of the m-by-n matrix A (row-major, A[i*n + j]) into the n-by-m matrix B "
           .. "(row-major): B[j*m + i] = A[i*n + j] for 0 <= i < m, 0 <= j < n.",
  prototype = "void transpose(int m, int n, const double *A, double *B)",
  sizes = { train = { m = 2048, n = 1024 }, heldout = { m = 1999, n = 1531 }, test = { m = 37, n = 29 } },
  args = {
    m = { value = "m" },
    n = { value = "n" },
    A = { count = "m*n" },
    B = { count = "m*n" },
  },
  flops = 0,  -- a copy: its speed is GB/s
  bytes = "16*m*n",
  roofline = "memory",
  bound = {
    factor = 0,
    scale = "output",
    why = "a transposition only copies values, so every element must be bit-exact (factor 0; the scale "
       .. "\"output\" only makes the bound a plain 0); a kernel that passes values through single precision "
       .. "(or any arithmetic that rounds) loses their low bits and fails.",
  },
  techniques = { "cache_blocking", "simd", "omp", "prefetch" },
  yardsticks = {
    openblas = library_yardstick("openblas", [[
void cblas_domatcopy(int order, int trans, int rows, int cols, double alpha, const double *a, int lda, double *b,
                     int ldb);
]], [[
void transpose(int m, int n, const double *A, double *B) {
  cblas_domatcopy(101, 112, m, n, 1.0, A, n, B, m);  /* OpenBLAS extension: B = 1.0 * A^T, row-major */
}
]]),
    blis = library_yardstick("blis", [[
#include <stdint.h>
/* BLIS's typed API (0.9, 64-bit dim_t): B = A^T as a copy with BLIS_TRANSPOSE (8), dense (BLIS_DENSE,
   224), non-unit diagonal (0); m and n are B's dimensions, then each matrix's row and column strides. */
void bli_dcopym(int64_t diagoffx, int diagx, int uplox, int transx, int64_t m, int64_t n, double *x,
                int64_t rs_x, int64_t cs_x, double *y, int64_t rs_y, int64_t cs_y);
]], [[
void transpose(int m, int n, const double *A, double *B) {
  bli_dcopym(0, 0, 224, 8, n, m, (double *)A, n, 1, B, m, 1);  /* A is only read */
}
]]),
  },
  reference = [[
void transpose(int m, int n, const double *A, double *B) {
  for (long i = 0; i < m; ++i)
    for (long j = 0; j < n; ++j) B[j * m + i] = A[i * n + j];
}
]],
}
