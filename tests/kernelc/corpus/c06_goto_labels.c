/* expect: ok | sizes: 9 10 11 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int i = 0, j, k;
outer:
    if (i >= M) goto done;
    j = 0;
inner:
    if (j == N) { i++; goto outer; }
    {
        double s = 0;
        for (k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
        C[i * N + j] = s;
    }
    j++;
    goto inner;
done:
    return;
}
