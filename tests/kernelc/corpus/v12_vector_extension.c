/* expect: ok | sizes: 8 16 8 */
typedef double v4d __attribute__((vector_size(32)));
typedef double v4du __attribute__((vector_size(32), aligned(8)));
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 4) {
            v4d acc = {0, 0, 0, 0};
            for (int k = 0; k < K; k++) {
                double a = A[i * K + k];
                v4d av = {a, a, a, a};
                acc += av * *(const v4du *)&B[k * N + j];
            }
            for (int t = 0; t < 4; t++) C[i * N + j + t] = acc[t];
        }
}
