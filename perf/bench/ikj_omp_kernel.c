/* The kernel reference_bench.lua and yardstick_bench.lua evaluate again and again: the ikj
 * loop nest, each thread of OpenMP its own rows of C. protocol_model.c includes it, so that
 * its model of the protocol times this very kernel. */
#include <string.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  #pragma omp parallel for
  for (int i = 0; i < M; i++) {
    double *c = C + (long)i * N;
    memset(c, 0, sizeof(double) * N);
    for (int k = 0; k < K; k++) {
      double a = A[(long)i * K + k];
      const double *b = B + (long)k * N;
      for (int j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}
