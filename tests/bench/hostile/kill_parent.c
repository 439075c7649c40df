/* expect: runtime_error | message: forbidden system call 'kill' */
/* kill(0, SIGKILL): every process of its group, or with pid -1 everything it may signal. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(62L), "D"(-1L), "S"(9L) : "rcx", "r11", "memory");
}
