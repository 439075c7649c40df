/* expect: ok | sizes: 16 16 16 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
#if defined(__AVX512F__)
    const int W = 8;
#elif defined(__AVX2__)
    const int W = 4;
#else
    const int W = 1;
#endif
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += W) {
#ifdef __AVX512F__
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k]), _mm512_loadu_pd(&B[k * N + j]), acc);
            _mm512_storeu_pd(&C[i * N + j], acc);
#else
            for (int t = 0; t < W; t++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j + t];
                C[i * N + j + t] = s;
            }
#endif
        }
}
