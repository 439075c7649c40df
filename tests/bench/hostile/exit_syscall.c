/* expect: runtime_error | message: ended its process (exit status 0) */
/* exit_group(0) before returning: a "successful" exit must not pass as a result. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(231L), "D"(0L) : "rcx", "r11", "memory");
}
