/* expect: runtime_error | message: forbidden system call 'open' on "/tmp/engine-hostile-open" */
/* open(path, O_WRONLY | O_CREAT, 0644) through the raw system call. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static const char path[] = "/tmp/engine-hostile-open";
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(2L), "D"(path), "S"(0101L), "d"(0644L) : "rcx", "r11", "memory");
}
