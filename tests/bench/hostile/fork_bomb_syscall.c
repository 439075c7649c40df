/* expect: runtime_error | message: forbidden system call 'fork' */
/* The same bomb through the raw system call, past the symbol check: seccomp stops it. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (;;) {
        long r;
        __asm__ volatile("syscall" : "=a"(r) : "a"(57L) : "rcx", "r11", "memory");
    }
}
