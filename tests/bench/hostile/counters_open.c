/* expect: runtime_error | message: forbidden system call 'perf_event_open' */
/* Opens a cycle counter on itself (perf_event_open), as a kernel would to learn when it */
/* is being counted or to read the counts the evaluation takes. */
struct attr { unsigned type, size; unsigned long config, period, sample_type, read_format, flags; };
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    struct attr a = {0, sizeof(struct attr), 0, 0, 0, 0, 0};
    long r;
    __asm__ volatile("mov $-1, %%r10\n\tmov $0, %%r8\n\tsyscall"
                     : "=a"(r) : "a"(298L), "D"(&a), "S"(0L), "d"(-1L) : "rcx", "r8", "r10", "r11", "memory");
    for (int i = 0; i < M * N; i++) C[i] = r;
}
