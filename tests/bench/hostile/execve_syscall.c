/* expect: runtime_error | message: forbidden system call 'execve' */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static char path[] = "/bin/touch", arg[] = "/tmp/engine-hostile-execve";
    char *argv[] = {path, arg, 0};
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(59L), "D"(path), "S"(argv), "d"(0L) : "rcx", "r11", "memory");
}
