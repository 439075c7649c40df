/* expect: ok | sizes: 16 16 16 */
#include <omp.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double sum = 0, prod = 1, mx = -1e300, mn = 1e300;
    long cnt = 0; int anyp = 0, allp = 1, bits = 0, band = -1, bx = 0;
    #pragma omp parallel for reduction(+:sum, cnt) reduction(*:prod) reduction(max:mx) reduction(min:mn) reduction(||:anyp) reduction(&&:allp) reduction(|:bits) reduction(&:band) reduction(^:bx)
    for (int i = 0; i < M * K; i++) {
        double v = A[i];
        sum += v; cnt++;
        prod *= (1.0 + v * 1e-3);
        mx = v > mx ? v : mx;
        mn = v < mn ? v : mn;
        anyp = anyp || v > 0.99;
        allp = allp && v >= 0.0;
        bits |= 1 << (i % 8);
        band &= ~(1 << (i % 3 + 20));
        bx ^= i;
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
    C[0] = sum; C[1] = (double)cnt; C[2] = prod; C[3] = mx; C[4] = mn; C[5] = anyp; C[6] = allp; C[7] = bits; C[8] = band; C[9] = bx;
}
