/* expect: verification_error | message: wrong result in call 1 */
/* Knows how inputs were once made (splitmix64 from seed 42, one stream a call) and */
/* computes every answer from its own copy of them, ignoring A and B. With the inputs */
/* drawn under a key from the operating system, its copy is wrong from the first call. */
#include <stdlib.h>
static unsigned long long state;
static int calls;
static double next_unit(void) {
    unsigned long long z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return 2 * ((double)(z >> 11) / 9007199254740992.0) - 1;
}
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    double *a = malloc(sizeof(double) * M * K), *b = malloc(sizeof(double) * K * N);
    state = 42ULL * 0x100000001b3ULL + (unsigned long long)calls++ + 1;
    for (long i = 0; i < (long)M * K; i++) a[i] = next_unit();
    for (long i = 0; i < (long)K * N; i++) b[i] = next_unit();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
            C[i * N + j] = s;
        }
    free(a);
    free(b);
}
