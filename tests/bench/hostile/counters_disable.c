/* expect: runtime_error | message: forbidden system call 'prctl' */
/* prctl(PR_TASK_PERF_EVENTS_DISABLE) stops every counter attached to the calling process, */
/* whoever opened it: the evaluation's counters would then read a fraction of the work. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(157L), "D"(31L), "S"(0L), "d"(0L) : "rcx", "r11", "memory");
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
