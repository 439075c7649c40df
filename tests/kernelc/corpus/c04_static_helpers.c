/* expect: ok | sizes: 31 19 23 */
#include <stddef.h>
static inline double dot(const double *restrict a, const double *restrict b, int n, int stride) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += a[k] * b[(size_t)k * stride];
    return s;
}
static void row(const double *a, const double *B, double *c, int N, int K) {
    for (int j = 0; j < N; j++) c[j] = dot(a, B + j, K, N);
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++) row(A + i * K, B, C + i * N, N, K);
}
