/* expect: ok | sizes: 20 24 28 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i = 0; i < M; i++) {
        double *crow = C + (long)i * N;
        const double *arow = A + (long)i * K;
        for (double *p = crow; p < crow + N; p++) *p = 0.0;
        for (int k = 0; k < K; k++) {
            const double a = *(arow + k);
            const double *b = &B[k * N];
            double *c = crow;
            for (const double *q = b; q != b + N; ++q, ++c) *c += a * *q;
        }
    }
}
