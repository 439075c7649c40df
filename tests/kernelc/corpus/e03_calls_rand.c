/* expect: library_violation */
#include <stdlib.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M * N; i++) C[i] = rand();
}
