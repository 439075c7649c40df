-- The paper's task: C = A x B in double precision, row-major. The engine implements it in
-- C++ (engine/task/matmul.cpp: OpenBLAS computes the reference and |A||B|), so this spec
-- gives its words, sizes and bound; its options also take problem = {M, N, K}.
return {
  name = "matmul",
  family = "blas3",
  split = "train",
  builtin = "matmul",
  statement = "Compute C = A * B where A is M-by-K, B is K-by-N and C is M-by-N, all stored "
           .. "row-major (A[i*K + k], B[k*N + j], C[i*N + j]).",
  prototype = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)",
  sizes = {
    train = { M = 256, N = 256, K = 256 },
    heldout = { M = 509, N = 263, K = 391 },
    test = { M = 48, N = 40, K = 32 },
  },
  flops = "2*M*N*K",
  bytes = "8*(M*K + K*N + M*N)",
  bound = {
    factor = "4*K",
    why = "each C[i][j] is a dot product of length K: in any order, with or without FMA, its error "
       .. "is at most K u (|A||B|)[i][j], the reference's as large again; single precision misses "
       .. "it by a factor near 2^29 / K.",
  },
  yardsticks = {  -- besides OpenBLAS, which the engine loads itself
    blis = library_yardstick("blis", [[
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc);
]], [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  cblas_dgemm(101, 111, 111, M, N, K, 1.0, A, K, B, N, 0.0, C, N);  /* row-major, no transposes */
}
]]),
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
}
