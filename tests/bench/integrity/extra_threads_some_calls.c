/* expect: ok (one wide call: not timed) | message: */
/* Runs four times its threads in WIDE_CALLS calls only (the first after the warm-up, */
/* and on), then joins them: a call that used more CPU time than its threads could is */
/* never timed, and a second such call refuses the kernel. */
#define WIDE_CALLS 1
int omp_get_max_threads(void);
int omp_pause_resource_all(int kind);
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    static int call;
    int wide = call >= 1 && call <= WIDE_CALLS;
    call++;
#pragma omp parallel for num_threads(wide ? 4 * omp_get_max_threads() : 1)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    if (wide) omp_pause_resource_all(2);
}
