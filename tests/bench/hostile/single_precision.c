/* expect: verification_error | message: double-precision bound */
/* Accumulates in float: within the paper's relative 1e-6, far outside the error bound */
/* of double precision. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < K; k++) s += (float)A[i * K + k] * (float)B[k * N + j];
            C[i * N + j] = s;
        }
}
