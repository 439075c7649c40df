/* expect: library_violation | message: code that would run when the kernel is loaded */
/* Defines _fini, which the linker makes the object's DT_FINI: code of the kernel's that */
/* the loader would run when the object is unloaded, outside any call. */
static double ran;
void _fini(void) { ran = 1; }
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = ran;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
