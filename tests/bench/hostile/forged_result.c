/* expect: rejected | message: result channel */
/* Writes a record of its own on the result pipe (fd 3) and carries on: detected. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static unsigned rec[2 + 6] = {2, 24};
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(1L), "D"(3L), "S"(rec), "d"(32L) : "rcx", "r11", "memory");
}
