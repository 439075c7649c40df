/* expect: ok | sizes: 8 8 8 */
typedef double v2 __attribute__((vector_size(16)));
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 2) {
            v2 acc = {0};
            for (int k = 0; k < K; k++) {
                v2 b = {B[k * N + j], B[k * N + j + 1]};
                acc = acc + A[i * K + k] * b;
            }
            acc = acc * 2.0 - acc;
            C[i * N + j] = acc[0];
            C[i * N + j + 1] = acc[1];
        }
}
