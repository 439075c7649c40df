/* expect: verification_error | message: wrong result */
/* Makes A writable with the raw mprotect call and changes it: only this child's copy */
/* changes, the result is judged against the zygote's reference, and later kernels see */
/* the original inputs. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    unsigned long page = (unsigned long)A & ~4095UL;
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(10L), "D"(page), "S"(8192L), "d"(3L) : "rcx", "r11", "memory");
    if (r == 0) A[0] = 1e9;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
