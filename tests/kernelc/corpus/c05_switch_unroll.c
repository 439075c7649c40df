/* expect: ok | sizes: 13 11 7; 16 16 16 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            int k = 0;
            switch (K % 4) {
                case 3: s += A[i * K + k] * B[k * N + j]; k++;
                case 2: s += A[i * K + k] * B[k * N + j]; k++;
                case 1: s += A[i * K + k] * B[k * N + j]; k++;
                case 0: break;
                default: s = -1;
            }
            for (; k < K; k += 4) {
                s += A[i * K + k] * B[k * N + j];
                s += A[i * K + k + 1] * B[(k + 1) * N + j];
                s += A[i * K + k + 2] * B[(k + 2) * N + j];
                s += A[i * K + k + 3] * B[(k + 3) * N + j];
            }
            C[i * N + j] = s;
        }
}
