/* expect: ok | sizes: 24 16 8 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int nt = 0;
    #pragma omp parallel num_threads(2) if(M > 4)
    {
        #pragma omp master
        nt = omp_get_num_threads();
        #pragma omp for
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
    }
    #pragma omp parallel for if(0)
    for (int i = 0; i < M; i++) C[i * N] += 0.0 * nt;
}
