/* expect: rejected | message: more threads than allowed */
/* Starts a helper thread by the raw clone system call (no OpenMP, no pthreads), moves it */
/* to a core other than its own, gives it half the rows and waits for it before */
/* returning: no thread is left for a count after the call, but the CPU time its */
/* process used during the call, read from outside, shows two threads at work. */
#include <stdlib.h>
long spawn_thread(unsigned long flags, void *stack_top, void (*fn)(void *), void *arg);
__asm__(
    ".text\n"
    "spawn_thread:\n"
    "  sub $16, %rsi\n"
    "  mov %rdx, (%rsi)\n"
    "  mov %rcx, 8(%rsi)\n"
    "  xor %edx, %edx\n"
    "  xor %r10d, %r10d\n"
    "  xor %r8d, %r8d\n"
    "  mov $56, %eax\n"
    "  syscall\n"
    "  test %rax, %rax\n"
    "  jnz 1f\n"
    "  pop %rax\n"
    "  pop %rdi\n"
    "  call *%rax\n"
    "  mov $60, %eax\n"
    "  xor %edi, %edi\n"
    "  syscall\n"
    "1: ret\n");

struct job { double *A, *B, *C; int M, N, K, from, to, cpu; volatile int done; };

static void rows(struct job *j) {
    for (int i = j->from; i < j->to; i++)
        for (int n = 0; n < j->N; n++) {
            double s = 0;
            for (int k = 0; k < j->K; k++) s += j->A[i * j->K + k] * j->B[k * j->N + n];
            j->C[i * j->N + n] = s;
        }
}

static void helper(void *arg) {
    struct job *j = arg;
    unsigned long mask[16] = {0};
    mask[j->cpu / 64] = 1UL << (j->cpu % 64);
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(203L), "D"(0L), "S"(sizeof mask), "d"(mask) : "rcx", "r11", "memory");
    rows(j);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
}

void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static char *stack;
    if (!stack) stack = malloc(1 << 16);
    unsigned long own[16] = {0};
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(204L), "D"(0L), "S"(sizeof own), "d"(own) : "rcx", "r11", "memory");
    int cpu = 0;
    while (cpu < 1024 && !(own[cpu / 64] >> (cpu % 64) & 1)) cpu++;
    struct job mine = {A, B, C, M, N, K, 0, M / 2, 0, 0};
    struct job other = {A, B, C, M, N, K, M / 2, M, cpu == 0 ? 1 : 0, 0};
    spawn_thread(0x50f00UL, stack + (1 << 16), helper, &other);
    rows(&mine);
    while (!__atomic_load_n(&other.done, __ATOMIC_ACQUIRE)) {}
}
