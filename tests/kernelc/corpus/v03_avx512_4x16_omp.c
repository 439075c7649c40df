/* expect: ok | sizes: 64 64 64; 32 32 48 */
#include <immintrin.h>
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i += 4)
        for (int j = 0; j < N; j += 16) {
            __m512d c00 = _mm512_setzero_pd(), c01 = _mm512_setzero_pd();
            __m512d c10 = _mm512_setzero_pd(), c11 = _mm512_setzero_pd();
            __m512d c20 = _mm512_setzero_pd(), c21 = _mm512_setzero_pd();
            __m512d c30 = _mm512_setzero_pd(), c31 = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m512d b0 = _mm512_loadu_pd(&B[k * N + j]), b1 = _mm512_loadu_pd(&B[k * N + j + 8]);
                __m512d a0 = _mm512_set1_pd(A[(i + 0) * K + k]);
                __m512d a1 = _mm512_set1_pd(A[(i + 1) * K + k]);
                __m512d a2 = _mm512_set1_pd(A[(i + 2) * K + k]);
                __m512d a3 = _mm512_set1_pd(A[(i + 3) * K + k]);
                c00 = _mm512_fmadd_pd(a0, b0, c00); c01 = _mm512_fmadd_pd(a0, b1, c01);
                c10 = _mm512_fmadd_pd(a1, b0, c10); c11 = _mm512_fmadd_pd(a1, b1, c11);
                c20 = _mm512_fmadd_pd(a2, b0, c20); c21 = _mm512_fmadd_pd(a2, b1, c21);
                c30 = _mm512_fmadd_pd(a3, b0, c30); c31 = _mm512_fmadd_pd(a3, b1, c31);
            }
            _mm512_storeu_pd(&C[(i + 0) * N + j], c00); _mm512_storeu_pd(&C[(i + 0) * N + j + 8], c01);
            _mm512_storeu_pd(&C[(i + 1) * N + j], c10); _mm512_storeu_pd(&C[(i + 1) * N + j + 8], c11);
            _mm512_storeu_pd(&C[(i + 2) * N + j], c20); _mm512_storeu_pd(&C[(i + 2) * N + j + 8], c21);
            _mm512_storeu_pd(&C[(i + 3) * N + j], c30); _mm512_storeu_pd(&C[(i + 3) * N + j + 8], c31);
        }
}
