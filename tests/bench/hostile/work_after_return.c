/* expect: rejected | message: threads in its process */
/* Starts raw clone() threads that compute C after the call has returned, so the timed */
/* call does nothing: 256 threads outnumber the OpenMP pool of any machine here (with */
/* fewer, the zygote stops them before they finish and C is wrong). */
static char stacks[256][1 << 14] __attribute__((aligned(16)));
static double *gA, *gB, *gC;
static int gM, gN, gK;
static volatile int started;
static void finish_later(void) {
    for (volatile long spin = 0; spin < 2000000; spin++) {}
    for (int i = 0; i < gM; i++)
        for (int j = 0; j < gN; j++) {
            double s = 0;
            for (int k = 0; k < gK; k++) s += gA[i * gK + k] * gB[k * gN + j];
            gC[i * gN + j] = s;
        }
    for (;;) { __asm__ volatile("pause"); }
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    gA = A; gB = B; gC = C; gM = M; gN = N; gK = K;
    if (started) return;
    started = 1;
    long flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000;  /* a thread */
    for (int t = 0; t < 256; t++) {
        long r;
        char *sp = stacks[t] + sizeof stacks[t];
        register void (*fn)(void) __asm__("r12") = finish_later;
        __asm__ volatile("syscall\n\ttest %%rax, %%rax\n\tjnz 1f\n\tcall *%%r12\n1:"
                         : "=a"(r) : "a"(56L), "D"(flags), "S"(sp), "d"(0L), "r"(fn)
                         : "rcx", "r11", "r10", "r8", "memory");
        (void)r;
    }
}
