/* expect: ok | sizes: 8 12 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 8) {
            int rem = N - j < 8 ? N - j : 8;
            __mmask8 m = _cvtu32_mask8((1u << rem) - 1u);
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m512d b = _mm512_mask_loadu_pd(_mm512_set1_pd(0.0), m, &B[k * N + j]);
                acc = _mm512_mask_fmadd_pd(_mm512_set1_pd(A[i * K + k]), m, b, acc);
                acc = _mm512_mask_add_pd(acc, 0, acc, acc);
            }
            __m512d r = _mm512_maskz_fmadd_pd(m, acc, _mm512_set1_pd(1.0), _mm512_setzero_pd());
            _mm512_mask_storeu_pd(&C[i * N + j], m, r);
        }
}
