/* expect: ok | sizes: 20 20 20 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double total = 0;
    int hits = 0;
    #pragma omp parallel for
    for (int i = 0; i < M; i++) {
        double rowsum = 0;
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            rowsum += s;
        }
        #pragma omp critical
        {
            total += rowsum;
        }
        #pragma omp atomic
        hits++;
        #pragma omp atomic update
        C[0] += 0.0;
    }
    #pragma omp parallel
    {
        #pragma omp critical(named)
        total += 0.0;
    }
    C[1] = hits;
    (void)total;
}
