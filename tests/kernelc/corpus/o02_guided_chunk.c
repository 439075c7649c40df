/* expect: ok | sizes: 50 20 30 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for schedule(guided, 3)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
}
