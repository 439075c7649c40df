/* expect: ok | sizes: 64 64 64; 40 48 56 */
#include <omp.h>
#define BS 16
#define MIN(a, b) ((a) < (b) ? (a) : (b))
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for
    for (int i = 0; i < M * N; i++) C[i] = 0.0;
    #pragma omp parallel for collapse(2) schedule(dynamic, 1)
    for (int ib = 0; ib < M; ib += BS)
        for (int jb = 0; jb < N; jb += BS)
            for (int kb = 0; kb < K; kb += BS)
                for (int i = ib; i < MIN(ib + BS, M); i++)
                    for (int k = kb; k < MIN(kb + BS, K); k++) {
                        double a = A[i * K + k];
                        for (int j = jb; j < MIN(jb + BS, N); j++) C[i * N + j] += a * B[k * N + j];
                    }
}
