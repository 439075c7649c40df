/* expect: ok | sizes: 6 6 6 */
#include <emmintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            __m128d s = _mm_set_sd(0.0);
            for (int k = 0; k < K; k++) s = _mm_add_sd(s, _mm_mul_sd(_mm_load_sd(&A[i * K + k]), _mm_set1_pd(B[k * N + j])));
            __m128d p = _mm_set_pd(1.0, 2.0);
            __m128d q = _mm_max_pd(_mm_min_pd(p, s), _mm_sub_pd(s, s));
            _mm_store_sd(&C[i * N + j], _mm_add_pd(s, _mm_mul_pd(q, _mm_setzero_pd())));
        }
}
