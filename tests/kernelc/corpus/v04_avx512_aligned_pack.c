/* expect: ok | sizes: 32 32 32 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *Bp = (double *)aligned_alloc(64, sizeof(double) * K * N);
    memcpy(Bp, B, sizeof(double) * K * N);
    double *Cp = (double *)_mm_malloc(sizeof(double) * N, 64);
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j += 8) _mm512_store_pd(&Cp[j], _mm512_setzero_pd());
        for (int k = 0; k < K; k++) {
            __m512d a = _mm512_set1_pd(A[i * K + k]);
            for (int j = 0; j < N; j += 8)
                _mm512_store_pd(&Cp[j], _mm512_add_pd(_mm512_load_pd(&Cp[j]), _mm512_mul_pd(a, _mm512_load_pd(&Bp[k * N + j]))));
        }
        memcpy(&C[i * N], Cp, sizeof(double) * N);
    }
    _mm_free(Cp);
    free(Bp);
}
