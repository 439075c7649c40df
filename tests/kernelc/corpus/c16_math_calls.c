/* expect: ok | sizes: 11 12 13 */
#include <math.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s = fma(A[i * K + k], B[k * N + j], s);
            C[i * N + j] = sqrt(fabs(s)) + floor(s) + ceil(s * 0.5) + fmax(s, 1.0) + fmin(s, 2.0) + pow(s, 2.0)
                           + exp(-s) + log(1.0 + s) + sin(s) * cos(s) + tanh(s) + M_PI * 0 + round(s * 3) + trunc(-s) + fmod(s, 0.7);
        }
}
