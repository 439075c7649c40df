/* expect: ok | sizes: 8 32 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        __m512d acc[4];
        for (int t = 0; t < 4; t++) acc[t] = _mm512_setzero_pd();
        for (int k = 0; k < K; k++) {
            __m512d a = _mm512_set1_pd(A[i * K + k]);
            for (int t = 0; t < 4; t++) acc[t] = _mm512_fmadd_pd(a, _mm512_loadu_pd(&B[k * N + 8 * t]), acc[t]);
        }
        for (int t = 0; t < 4; t++) _mm512_storeu_pd(&C[i * N + 8 * t], acc[t]);
    }
}
