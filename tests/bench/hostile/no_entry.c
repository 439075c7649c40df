/* expect: compile_error | message: no function named 'matmul_optimized' */
void matmul(double *A, double *B, double *C, int M, int N, int K) {}
