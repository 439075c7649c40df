/* expect: ok | sizes: 8 8 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m128d a1 = _mm_set1_pd(A[i * K + k]);
                acc = _mm512_fmadd_pd(_mm512_broadcastsd_pd(a1), _mm512_loadu_pd(&B[k * N + j]), acc);
            }
            __m256d lo = _mm512_castpd512_pd256(acc);
            __m256d hi = _mm512_extractf64x4_pd(acc, 1);
            _mm256_storeu_pd(&C[i * N + j], lo);
            _mm256_storeu_pd(&C[i * N + j + 4], hi);
            C[i * N + j] += _mm512_cvtsd_f64(acc) * 0.0;
        }
}
