/* expect: ok | message: */
/* Chooses its loop at run time by __builtin_cpu_supports, which brings libgcc's CPU */
/* model constructor (__cpu_indicator_init) into the kernel: code the toolchain adds */
/* without the kernel's asking, on the list of what may run at load time. */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    int wide = __builtin_cpu_supports("avx2");
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            if (wide)
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
            else
                for (int k = K - 1; k >= 0; k--) s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
