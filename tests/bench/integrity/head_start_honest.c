/* expect: ok | message: none */
/* The honest twin of head_start_helper.c: the same helper thread, started at the first */
/* call and kept across calls, but told to work by the call itself (a counter) rather */
/* than by watching the inputs. It verifies, and every call's span holds its HOLD. */
#define HOLD 0.004
double omp_get_wtime(void);
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
static double *volatile ga, *volatile gb, *volatile gc;
static volatile int gm, gn, gk;
static volatile long published, asked;
static long calls;
static void helper(void *unused) {
    (void)unused;
    long done = 0;
    for (;;) {
        if (asked == done) continue;
        double t0 = omp_get_wtime();
        const double *A = ga, *B = gb;
        int M = gm, N = gn, K = gk;
        double *C = gc;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
        while (omp_get_wtime() - t0 < HOLD) {
        }
        __sync_synchronize();  /* C written before the call may see it published */
        published = ++done;
    }
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    long want = ++calls;
    if (want == 1) {
        ga = A, gb = B, gc = C, gm = M, gn = N, gk = K;
        GOMP_parallel_start(helper, 0, 2);  /* the master returns; thread 1 runs helper */
    }
    asked = want;
    while (published < want) {
    }
    __sync_synchronize();
}
