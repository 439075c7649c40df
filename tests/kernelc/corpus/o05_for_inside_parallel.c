/* expect: ok | sizes: 33 31 29 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel
    {
        #pragma omp for
        for (int i = 0; i < M * N; i++) C[i] = 0.0;
        #pragma omp for schedule(static) nowait
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) {
                double a = A[i * K + k];
                for (int j = 0; j < N; j++) C[i * N + j] += a * B[k * N + j];
            }
        #pragma omp barrier
    }
}
