/* expect: ok | sizes: 10 14 6 */
#include <emmintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 2) {
            __m128d acc = _mm_setzero_pd();
            for (int k = 0; k < K; k++) {
                __m128d a = _mm_load1_pd(&A[i * K + k]);
                __m128d b = _mm_loadu_pd(&B[k * N + j]);
                acc = _mm_add_pd(acc, _mm_mul_pd(a, b));
            }
            _mm_storeu_pd(&C[i * N + j], acc);
        }
}
