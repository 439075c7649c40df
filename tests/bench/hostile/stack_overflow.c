/* expect: runtime_error | message: overflowed the stack */
static double deep(volatile double *p, long n) {
    volatile double pad[512];
    pad[0] = p[0] + n;
    return deep(pad, n + 1) + pad[0];
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    C[0] = deep(A, 0);
}
