/* expect: timeout | message: ran longer than */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    #pragma omp parallel
    {
        volatile long spin = 0;
        for (;;) spin++;
    }
}
