/* expect: rejected | message: threads in its process */
/* Raw clone() of spinning threads until the system says no: the thread limit stops it */
/* (the kernel runs as an unprivileged user with RLIMIT_NPROC), the kernel gives up */
/* without computing C, and every thread ends with its process. */
static char stacks[1 << 20];
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000;  /* a thread */
    for (long i = 0; i < 1000000; i++) {
        long r;
        char *sp = stacks + 4096 * (1 + i % 255);
        __asm__ volatile("syscall\n\ttest %%rax, %%rax\n\tjnz 1f\n0:\tpause\n\tjmp 0b\n1:"
                         : "=a"(r) : "a"(56L), "D"(flags), "S"(sp), "d"(0L)
                         : "rcx", "r11", "r10", "r8", "memory");
        if (r < 0) return;
    }
}
