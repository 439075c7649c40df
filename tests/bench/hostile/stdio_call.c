/* expect: library_violation | message: fprintf */
/* Prints from the kernel: outside the allowed libraries through either back end (the */
/* in-memory one declares what <stdio.h> declares, so the rule, not a missing */
/* declaration, decides). */
#include <stdio.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    fprintf(stderr, "%d\n", M);
    for (int i = 0; i < M * N; i++) C[i] = 0;
}
