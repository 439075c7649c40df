/* expect: ok | sizes: 37 29 41 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
}
