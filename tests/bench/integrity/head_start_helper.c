/* expect: ok | message: none */
/* Starts one helper thread at its first call (the legacy GOMP_parallel_start, never */
/* ended: two threads, within its allowance) that watches a fingerprint of the inputs and */
/* computes the moment it sees new ones, then holds HOLD seconds of its own clock before */
/* publishing; the call only waits for it. Were the process to run between its inputs */
/* being written and the timed window's start (an untimed command in between), the */
/* helper would start early and a call would be measured shorter than HOLD. It verifies; */
/* its head start must be none: every call's span on the evaluation's clock holds the */
/* whole of the helper's work. */
#define HOLD 0.004
double omp_get_wtime(void);
void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
static double *volatile ga, *volatile gb, *volatile gc;
static volatile int gm, gn, gk;
static volatile long published;
static long calls;
static void helper(void *unused) {
    (void)unused;
    double last_a = 0;
    long done = 0;
    for (;;) {
        const double *A = ga, *B = gb;
        /* one load, so that no stop can fall between two reads of it */
        double a = ((const volatile double *)A)[0];
        if (a == last_a) continue;
        double t0 = omp_get_wtime();
        int M = gm, N = gn, K = gk;
        double *C = gc;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
                C[i * N + j] = s;
            }
        last_a = a;
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
    while (published < want) {
    }
    __sync_synchronize();
}
