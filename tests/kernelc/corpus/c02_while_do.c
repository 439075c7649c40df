/* expect: ok | sizes: 33 17 9 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int i = 0;
    while (i < M) {
        int j = 0;
        do {
            double s = 0.0;
            int k = K;
            while (k-- > 0) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        } while (++j < N);
        i++;
    }
}
