/* expect: ok | sizes: 16 32 16; 8 8 24 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i += 4)
        for (int j = 0; j < N; j += 8) {
            __m256d c[4][2];
            for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m256d b0 = _mm256_loadu_pd(&B[k * N + j]);
                __m256d b1 = _mm256_loadu_pd(&B[k * N + j + 4]);
                for (int r = 0; r < 4; r++) {
                    __m256d a = _mm256_broadcast_sd(&A[(i + r) * K + k]);
                    c[r][0] = _mm256_fmadd_pd(a, b0, c[r][0]);
                    c[r][1] = _mm256_fmadd_pd(a, b1, c[r][1]);
                }
            }
            for (int r = 0; r < 4; r++) {
                _mm256_storeu_pd(&C[(i + r) * N + j], c[r][0]);
                _mm256_storeu_pd(&C[(i + r) * N + j + 4], c[r][1]);
            }
        }
}
