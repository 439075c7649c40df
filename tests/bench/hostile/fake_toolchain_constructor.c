/* expect: library_violation | message: code that would run when the kernel is loaded */
/* Names its own constructor after libgcc's CPU model constructor, the one load-time */
/* code a kernel may carry: only the toolchain's own is allowed, and the kernel's object */
/* may hold none. */
static int ran;
__attribute__((constructor)) void __cpu_indicator_init(void) { ran = 1; }
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = ran;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s - ran;
        }
}
