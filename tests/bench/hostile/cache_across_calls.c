/* expect: verification_error | message: wrong result in call 2 */
/* Computes C once and replays it afterwards, refreshing only its first row: every call */
/* has inputs of its own, so the replay is wrong. */
#include <string.h>
static double saved[512 * 512];
static int calls;
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int rows = calls++ == 0 ? M : 1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    if (rows == M) memcpy(saved, C, sizeof(double) * M * N);
    else memcpy(C + N, saved + N, sizeof(double) * (M - 1) * N);
}
