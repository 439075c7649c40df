/* expect: verification_error | message: wrong result in call 1 */
/* Computes only the corners, the centre and every 7th element, as if it knew which */
/* points are checked: every element of every call is. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int corner = (i == 0 || i == M - 1) && (j == 0 || j == N - 1);
            int centre = i == M / 2 && j == N / 2;
            if (!corner && !centre && (i * N + j) % 7) { C[i * N + j] = 0; continue; }
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
