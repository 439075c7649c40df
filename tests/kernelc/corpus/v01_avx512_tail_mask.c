/* expect: ok | sizes: 13 37 11; 8 16 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        int j = 0;
        for (; j + 8 <= N; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++)
                acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k]), _mm512_loadu_pd(&B[k * N + j]), acc);
            _mm512_storeu_pd(&C[i * N + j], acc);
        }
        if (j < N) {
            __mmask8 m = (__mmask8)((1u << (N - j)) - 1);
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++)
                acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k]), _mm512_maskz_loadu_pd(m, &B[k * N + j]), acc);
            _mm512_mask_storeu_pd(&C[i * N + j], m, acc);
        }
    }
}
