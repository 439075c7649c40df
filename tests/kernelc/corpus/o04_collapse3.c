/* expect: ok | sizes: 12 10 8 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M * N; i++) C[i] = 0;
    #pragma omp parallel for collapse(2)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    #pragma omp parallel for collapse(3) schedule(dynamic, 7)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            for (int t = 0; t < 2; t++)
                if (t == 1) C[i * N + j] += 0.0;
}
