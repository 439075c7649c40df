/* expect: runtime_error | message: Thread creation failed */
/* Asks the OpenMP runtime for far more threads than the sandbox allows: libgomp reports the */
/* failed thread creation on stderr, which the sandbox refuses, and the verdict quotes it. */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
#pragma omp parallel num_threads(3000)
    {
        if (omp_get_thread_num() == 0)
            for (int i = 0; i < M * N; i++) C[i] = 0;
    }
}
