/* expect: ok | sizes: 20 20 20 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for
    for (int i = 0; i <= M - 1; i += 2)
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
    #pragma omp parallel for
    for (int i = 1; i < M; i = i + 2)
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
}
