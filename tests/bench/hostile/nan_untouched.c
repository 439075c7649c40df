/* expect: verification_error | message: wrong result */
/* Computes all of C but its last row: passes with zero-filled C only if that row's */
/* expected values were zero, so it must fail (points include the corners). */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M - 1; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
