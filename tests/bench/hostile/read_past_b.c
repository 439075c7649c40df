/* expect: runtime_error | message: bytes past the end of B */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (long i = 0;; i++) C[i % ((long)M * N)] = B[(long)K * N + i];
}
