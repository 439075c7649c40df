/* expect: runtime_error | message: int $0x80 */
/* fork through the 32-bit system call gate (i386 number 2), which a filter written */
/* for x86-64 numbers must not let through. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(2L) : "memory");
}
