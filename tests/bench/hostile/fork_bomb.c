/* expect: library_violation | message: call to 'fork' */
#include <unistd.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (;;) fork();
}
