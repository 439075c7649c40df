/* expect: ok | sizes: 16 16 16 */
#include <omp.h>
static void row_kernel(const double *a, const double *B, double *c, int N, int K) {
    for (int j = 0; j < N; j++) c[j] = 0;
    for (int k = 0; k < K; k++) {
        double v = a[k];
        for (int j = 0; j < N; j++) c[j] += v * B[k * N + j];
    }
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int rows_done = 0;
    #pragma omp parallel for reduction(+:rows_done) schedule(runtime)
    for (int i = 0; i < M; i++) {
        row_kernel(&A[i * K], B, &C[i * N], N, K);
        rows_done += 1;
    }
    if (rows_done != M) C[0] = -1;
}
