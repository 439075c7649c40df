/* expect: ok | sizes: 18 22 26 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int i, j, k;
    double s, bias = 0.5;
    #pragma omp parallel for private(j, k, s) firstprivate(bias)
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            s = bias;
            for (k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s - bias;
            bias += 0.0;
        }
}
