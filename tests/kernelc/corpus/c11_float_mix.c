/* expect: ok | sizes: 10 12 14 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float fs = 0.0f;
            double ds = 0.0;
            for (int k = 0; k < K; k++) {
                fs += (float)A[i * K + k] * (float)B[k * N + j];
                ds += A[i * K + k] * B[k * N + j];
            }
            C[i * N + j] = ds + (double)(fs - (float)ds) * 0.0 + 0.5f;
        }
}
