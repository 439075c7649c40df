/* expect: ok | sizes: 16 64 32 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 8) {
            __m512d acc = _mm512_setzero_pd();
            for (int k = 0; k < K; k++) {
                _mm_prefetch((const char *)&B[(k + 4 < K ? k + 4 : k) * N + j], _MM_HINT_T0);
                __builtin_prefetch(&A[i * K + k + 8], 0, 1);
                _mm_prefetch((const char *)&C[i * N + j], _MM_HINT_NTA);
                acc = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k]), _mm512_loadu_pd(&B[k * N + j]), acc);
            }
            _mm512_storeu_pd(&C[i * N + j], acc);
        }
}
