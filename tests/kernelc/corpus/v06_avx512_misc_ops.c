/* expect: ok | sizes: 8 16 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m512d a = _mm512_set1_pd(A[i * K + k]);
                __m512d b = _mm512_loadu_pd(&B[k * N + j]);
                acc = _mm512_add_pd(acc, _mm512_fmsub_pd(a, b, _mm512_setzero_pd()));
            }
            __m512d hi = _mm512_max_pd(acc, _mm512_set1_pd(3.0));
            __m512d lo = _mm512_min_pd(acc, _mm512_set1_pd(3.0));
            __m512d d = _mm512_div_pd(_mm512_sub_pd(hi, lo), _mm512_set1_pd(2.0));
            __m512d r = _mm512_fnmadd_pd(d, _mm512_set1_pd(0.0), acc);
            __m512d s = _mm512_set_pd(7, 6, 5, 4, 3, 2, 1, 0);
            r = _mm512_add_pd(r, _mm512_mul_pd(s, _mm512_setzero_pd()));
            r = _mm512_mask_blend_pd(0x0F, r, r);
            _mm512_storeu_pd(&C[i * N + j], r);
            C[i * N + j] += _mm512_reduce_max_pd(d) * 0.0 + _mm512_reduce_min_pd(d) * 0.0;
        }
}
