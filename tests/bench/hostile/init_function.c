/* expect: library_violation | message: code that would run when the kernel is loaded */
/* Defines _init, which the linker makes the object's DT_INIT: the loader would run it */
/* before the first call. It sets a flag the result depends on, so a kernel whose */
/* _init ran verifies: no back end may load it. */
static double ran;
void _init(void) { ran = 1; }
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 1 - ran;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
