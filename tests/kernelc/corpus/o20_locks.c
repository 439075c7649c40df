/* expect: ok | sizes: 10 10 10 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    omp_lock_t lock;
    omp_init_lock(&lock);
    double total = 0;
    #pragma omp parallel for
    for (int i = 0; i < M; i++) {
        double part = 0;
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            part += 1;
        }
        omp_set_lock(&lock);
        total += part;
        omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
    C[0] += total - M * N;
}
