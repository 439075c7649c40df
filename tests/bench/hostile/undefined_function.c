/* expect: compile_error | message: undefined reference to `helper_that_does_not_exist' */
void helper_that_does_not_exist(double *C);
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    helper_that_does_not_exist(C);
}
