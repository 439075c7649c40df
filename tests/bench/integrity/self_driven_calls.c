/* expect: ok | message: none */
/* Drives the calls itself: after its first answer it writes a well-formed "call */
/* returned" record claiming a microsecond, reads the next command from the harness's */
/* pipe and answers it without ever returning. Were the next command not a call (a */
/* library's untimed wake-up; a kernel gets none), it would answer out of turn and be */
/* refused; either way the time of a call is bounded below by the evaluation process's */
/* clock less its round trip, so its claims do not count. */
struct done { unsigned type, len, call, pad; double seconds; };
static long sys3(long nr, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (unsigned call = 0;; call++) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
        struct done rec = {2, 16, call, 0, 1e-6};
        sys3(1, 3, (long)&rec, sizeof rec);
        char cmd;
        if (sys3(0, 4, (long)&cmd, 1) != 1) return;
    }
}
