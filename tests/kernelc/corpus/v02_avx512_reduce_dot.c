/* expect: ok | sizes: 9 7 64; 5 3 16 */
#include <immintrin.h>
#include <stdlib.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *Bt = malloc(sizeof(double) * K * N);
    for (int k = 0; k < K; k++) for (int j = 0; j < N; j++) Bt[j * K + k] = B[k * N + j];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            __m512d acc = _mm512_setzero_pd();
            int k = 0;
            for (; k + 8 <= K; k += 8) acc = _mm512_fmadd_pd(_mm512_loadu_pd(&A[i * K + k]), _mm512_loadu_pd(&Bt[j * K + k]), acc);
            double s = _mm512_reduce_add_pd(acc);
            for (; k < K; k++) s += A[i * K + k] * Bt[j * K + k];
            C[i * N + j] = s;
        }
    free(Bt);
}
