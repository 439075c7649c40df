/* expect: ok | sizes: 17 9 5 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int last = -1;
    int i;
    #pragma omp parallel for lastprivate(last, i)
    for (i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
        }
        last = i * 10;
    }
    C[0] = last + i;
}
