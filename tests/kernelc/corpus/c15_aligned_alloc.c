/* expect: ok | sizes: 16 32 8 */
#include <stdlib.h>
#include <string.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *pack = NULL;
    if (posix_memalign((void **)&pack, 64, sizeof(double) * K * N) != 0) return;
    double *z = aligned_alloc(64, 64 * sizeof(double));
    memset(z, 0, 64 * sizeof(double));
    memcpy(pack, B, sizeof(double) * K * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = z[j % 64];
            for (int k = 0; k < K; k++) s += A[i * K + k] * pack[k * N + j];
            C[i * N + j] = s;
        }
    free(z);
    free(pack);
}
