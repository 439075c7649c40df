/* A library's cblas_dgemm (OpenBLAS by default, or the shared library named by the fourth
 * argument: libblis.so.4) measured the plain way a user would: one process, its thread
 * pool warm, `warmup` untimed calls then `calls` timed ones on the same buffers, each
 * timed alone. Prints one JSON line: best and median GFLOPS.
 *
 *   gcc -O2 dgemm_plain.c -o dgemm_plain -ldl && OPENBLAS_NUM_THREADS=16 ./dgemm_plain 256 5 50
 *   BLIS_NUM_THREADS=16 ./dgemm_plain 256 5 50 libblis.so.4
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "plain_timing.h"

typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int,
                         double, double *, int);

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256, warmup = argc > 2 ? atoi(argv[2]) : 5;
  int calls = argc > 3 ? atoi(argv[3]) : 50;
  void *lib = dlopen(argc > 4 ? argv[4] : "libopenblas.so.0", RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  dgemm_fn dgemm = (dgemm_fn)dlsym(lib, "cblas_dgemm");
  double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n), *C = malloc(sizeof(double) * n * n);
  double *t = malloc(sizeof(double) * calls);
  for (long i = 0; i < (long)n * n; i++) { A[i] = rand() / (double)RAND_MAX; B[i] = rand() / (double)RAND_MAX; }
  for (int i = 0; i < warmup; i++) dgemm(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
  for (int i = 0; i < calls; i++) {
    double t0 = now();
    dgemm(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
    t[i] = now() - t0;
  }
  qsort(t, calls, sizeof *t, by_value);
  double flops = 2.0 * n * n * n;
  printf("{\"best_gflops\": %.2f, \"median_gflops\": %.2f, \"calls\": %d, \"check\": %.6g}\n", flops / t[0] * 1e-9,
         flops / t[calls / 2] * 1e-9, calls, C[0]);
  return 0;
}
