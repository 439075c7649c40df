/* expect: ok | sizes: 10 10 10 */
typedef struct { int lo, hi; } Range;
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    Range r = (Range){0, K};
    int sizes[] = {(int)sizeof(double), (int)sizeof(Range), (int)sizeof r, (int)sizeof(int[3])};
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = r.lo; k < r.hi; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s + sizes[0] + sizes[1] + sizes[2] + sizes[3] + (int)(sizeof sizes / sizeof sizes[0]);
        }
}
