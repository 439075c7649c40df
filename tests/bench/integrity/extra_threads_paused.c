/* expect: rejected | message: more threads than allowed */
/* Runs twice the threads it was given, then joins them (omp_pause_resource_all) before */
/* returning, so no extra thread is left for a count after the call: the CPU time its */
/* process used during the call, read from outside, still shows them. */
/* Declared here: not every omp.h names the pause kinds (2 is omp_pause_hard). */
int omp_get_max_threads(void);
int omp_pause_resource_all(int kind);
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int wide = 4 * omp_get_max_threads();
#pragma omp parallel for num_threads(wide)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    omp_pause_resource_all(2);
}
