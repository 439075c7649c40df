/* expect: ok | sizes: 21 22 23 */
#include <stdlib.h>
#include <string.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *Bt = (double *)malloc(sizeof(double) * K * N);
    double *tmp = calloc((size_t)N, sizeof *tmp);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) Bt[j * K + k] = B[k * N + j];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * Bt[j * K + k];
            tmp[j] = s;
        }
        memcpy(&C[i * N], tmp, sizeof(double) * N);
    }
    memmove(C + 1, C, sizeof(double) * 0);
    free(tmp);
    free(Bt);
}
