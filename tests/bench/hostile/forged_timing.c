/* expect: rejected | message: result channel */
/* Does the work, then writes a "call returned" record of its own claiming a nanosecond */
/* on the result pipe (fd 3), and returns: the harness's own record follows and the two */
/* disagree. */
struct done { unsigned type, len, call, pad; double seconds; };
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static unsigned calls;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    struct done rec = {2, 16, calls++, 0, 1e-9};
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(1L), "D"(3L), "S"(&rec), "d"(sizeof rec) : "rcx", "r11", "memory");
}
