/* expect: ok | sizes: 9 13 17 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double row[N];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) row[j] = 0;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++) row[j] += A[i * K + k] * B[k * N + j];
        for (int j = 0; j < N; j++) C[i * N + j] = row[j];
    }
}
