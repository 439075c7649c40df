/* expect: library_violation | message: constructor */
/* Code that would run when the object is loaded, before the sandbox is tightened. */
__attribute__((constructor)) static void early(void) {
    volatile long spin = 0;
    for (;;) spin++;
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}
