/* expect: ok | sizes: 64 64 64 */
#include <immintrin.h>
#include <omp.h>
#define BK 16
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for
    for (int i = 0; i < M * N; i++) C[i] = 0.0;
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++)
        for (int kk = 0; kk < K; kk += BK)
            for (int j = 0; j < N; j += 4) {
                __m256d c = _mm256_loadu_pd(&C[i * N + j]);
                for (int k = kk; k < kk + BK && k < K; k++)
                    c = _mm256_fmadd_pd(_mm256_set1_pd(A[i * K + k]), _mm256_loadu_pd(&B[k * N + j]), c);
                _mm256_storeu_pd(&C[i * N + j], c);
            }
}
