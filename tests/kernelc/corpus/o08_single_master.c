/* expect: ok | sizes: 16 24 8 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int flag = 0;
    #pragma omp parallel
    {
        #pragma omp single
        { flag = 1; }
        #pragma omp master
        { C[0] = 0; }
        #pragma omp barrier
        #pragma omp for
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
        #pragma omp single nowait
        { C[0] += flag - 1; }
    }
}
