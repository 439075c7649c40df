/* expect: ok | sizes: 19 21 23 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for
    for (int i = M - 1; i >= 0; i--)
        for (int j = N - 1; j >= 0; --j) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
    #pragma omp parallel for schedule(static, 2)
    for (int i = M; i > 0; i -= 3) C[(i - 1) * N] += 0.0;
}
