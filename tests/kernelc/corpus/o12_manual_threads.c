/* expect: ok | sizes: 31 7 13 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel
    {
        int tid = omp_get_thread_num(), nth = omp_get_num_threads();
        for (int i = tid; i < M; i += nth)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
    }
}
