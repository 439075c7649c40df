/* expect: compile_error */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++) C[i] = A[i] * scale;
}
