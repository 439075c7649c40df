/* expect: runtime_error | message: wrote to the read-only input A at A[0][0] */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    A[0] = 0.0;  /* would make the reference wrong for every later kernel if it worked */
}
