/* expect: compile_error */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *p = A;
    int x = p % 4;
    C[0] = x;
}
