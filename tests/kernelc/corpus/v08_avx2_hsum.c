/* expect: ok | sizes: 7 9 16; 3 3 4 */
#include <immintrin.h>
static double hsum(__m256d v) {
    __m128d lo = _mm256_castpd256_pd128(v);
    __m128d hi = _mm256_extractf128_pd(v, 1);
    lo = _mm_add_pd(lo, hi);
    __m128d sh = _mm_unpackhi_pd(lo, lo);
    return _mm_cvtsd_f64(_mm_add_sd(lo, sh));
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            __m256d acc = _mm256_setzero_pd();
            int k = 0;
            for (; k + 4 <= K; k += 4) {
                __m256d a = _mm256_loadu_pd(&A[i * K + k]);
                __m256d b = _mm256_set_pd(B[(k + 3) * N + j], B[(k + 2) * N + j], B[(k + 1) * N + j], B[k * N + j]);
                acc = _mm256_add_pd(acc, _mm256_mul_pd(a, b));
            }
            double s = hsum(acc);
            for (; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
