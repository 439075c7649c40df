/* expect: ok | sizes: 4 8 8 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 4) {
            __m256d acc = _mm256_setzero_pd();
            for (int k = 0; k < K; k++)
                acc = _mm256_fmadd_pd(_mm256_set1_pd(A[i * K + k]), _mm256_loadu_pd(&B[k * N + j]), acc);
            __m256d h = _mm256_hadd_pd(acc, acc);
            __m256d m = _mm256_max_pd(acc, _mm256_min_pd(acc, h));
            __m256d d = _mm256_div_pd(_mm256_sub_pd(m, acc), _mm256_set1_pd(4.0));
            __m256d u = _mm256_unpacklo_pd(d, _mm256_unpackhi_pd(d, d));
            acc = _mm256_fnmadd_pd(u, _mm256_setzero_pd(), acc);
            acc = _mm256_fmsub_pd(acc, _mm256_set1_pd(1.0), _mm256_setzero_pd());
            _mm256_storeu_pd(&C[i * N + j], acc);
        }
}
