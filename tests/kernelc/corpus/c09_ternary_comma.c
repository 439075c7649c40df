/* expect: ok | sizes: 15 16 17 */
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int i, j, k;
    for (i = 0, j = 0; i < M; j = (j + 1 == N) ? (i++, 0) : j + 1) {
        double s = 0;
        for (k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
        C[i * N + j] = MAX(MIN(s, 1e9), -1e9);
    }
}
