/* expect: ok | sizes: 16 32 32 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 8) {
            __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), a2 = _mm512_setzero_pd(), a3 = _mm512_setzero_pd();
            int k = 0;
            for (; k + 4 <= K; k += 4) {
                a0 = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k + 0]), _mm512_loadu_pd(&B[(k + 0) * N + j]), a0);
                a1 = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k + 1]), _mm512_loadu_pd(&B[(k + 1) * N + j]), a1);
                a2 = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k + 2]), _mm512_loadu_pd(&B[(k + 2) * N + j]), a2);
                a3 = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k + 3]), _mm512_loadu_pd(&B[(k + 3) * N + j]), a3);
            }
            for (; k < K; k++) a0 = _mm512_fmadd_pd(_mm512_set1_pd(A[i * K + k]), _mm512_loadu_pd(&B[k * N + j]), a0);
            _mm512_storeu_pd(&C[i * N + j], _mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
        }
}
