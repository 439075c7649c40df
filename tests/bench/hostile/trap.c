/* expect: runtime_error | message: illegal instruction */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    __builtin_trap();
}
