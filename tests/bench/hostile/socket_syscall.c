/* expect: runtime_error | message: forbidden system call 'socket' */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(41L), "D"(2L), "S"(1L), "d"(0L) : "rcx", "r11", "memory");
}
