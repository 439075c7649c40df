/* expect: ok | sizes: 16 32 16 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for simd
    for (int i = 0; i < M * N; i++) C[i] = 0;
    #pragma omp parallel for
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            double a = A[i * K + k];
            #pragma omp simd
            for (int j = 0; j < N; j++) C[i * N + j] += a * B[k * N + j];
        }
}
