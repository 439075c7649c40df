/* expect: ok | sizes: 8 16 8 */
#define UNROLL 4
#define CAT(a, b) a##b
#define ACC(n) double CAT(s, n) = 0
#define STEP(n) CAT(s, n) += A[i * K + k] * B[k * N + j + n]
#define STORE(n) C[i * N + j + n] = CAT(s, n)
#if UNROLL == 4 && defined(CAT)
#define BODY STEP(0); STEP(1); STEP(2); STEP(3)
#else
#error unsupported unroll
#endif
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += UNROLL) {
            ACC(0); ACC(1); ACC(2); ACC(3);
            for (int k = 0; k < K; k++) { BODY; }
            STORE(0); STORE(1); STORE(2); STORE(3);
        }
}
