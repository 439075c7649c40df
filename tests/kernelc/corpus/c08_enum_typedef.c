/* expect: ok | sizes: 8 8 8 */
typedef double real;
typedef int index_t;
enum Order { ROW = 1, COL = ROW + 1, LAST = 10 };
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    enum Order o = COL;
    for (index_t i = 0; i < M; i++)
        for (index_t j = 0; j < N; j++) {
            real s = 0;
            for (index_t k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s * (o == COL ? 1.0 : 2.0) + (LAST - 10);
        }
}
