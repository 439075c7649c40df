/* expect: ok | sizes: 16 16 16; 8 8 8 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (int i0 = 0; i0 < M; i0 += 4)
        for (int j0 = 0; j0 < N; j0 += 4) {
            double acc[4][4] = {{0}};
            for (int k = 0; k < K; k++)
                for (int ii = 0; ii < 4; ii++)
                    for (int jj = 0; jj < 4; jj++)
                        acc[ii][jj] += A[(i0 + ii) * K + k] * B[k * N + j0 + jj];
            for (int ii = 0; ii < 4; ii++)
                for (int jj = 0; jj < 4; jj++) C[(i0 + ii) * N + j0 + jj] = acc[ii][jj];
        }
}
