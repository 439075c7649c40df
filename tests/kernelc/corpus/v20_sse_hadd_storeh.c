/* expect: ok | sizes: 4 6 10 */
#include <immintrin.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            __m128d acc = _mm_setzero_pd();
            int k = 0;
            for (; k + 2 <= K; k += 2) acc = _mm_fmadd_pd(_mm_loadu_pd(&A[i * K + k]), _mm_setr_pd(B[k * N + j], B[(k + 1) * N + j]), acc);
            acc = _mm_hadd_pd(acc, acc);
            double lo, hi;
            _mm_storel_pd(&lo, acc);
            _mm_storeh_pd(&hi, acc);
            for (; k < K; k++) lo += A[i * K + k] * B[k * N + j];
            C[i * N + j] = lo + 0.0 * hi;
        }
}
