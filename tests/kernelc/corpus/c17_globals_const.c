/* expect: ok | sizes: 12 12 12 */
static const double weights[4] = {1.0, 0.5, 0.25, 0.125};
static const int BS = 4;
const double scale = 2.0;
static int calls;
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    calls++;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s * scale * weights[(i + j) % BS] + (calls > 0);
        }
}
