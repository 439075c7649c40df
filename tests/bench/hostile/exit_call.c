/* expect: library_violation | message: call to 'exit' */
#include <stdlib.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    exit(0);
}
