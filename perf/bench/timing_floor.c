/* The floor of timing_bench.lua: a plain C program that times one compiled kernel the
 * simplest honest way, in a fresh process of its own, with no sandbox, no stop and
 * continue between calls and no inputs written by another process. Inputs are made
 * once per call set in this process (SETS sets, cycled, so no call sees the inputs of
 * the call before it); one untimed call; CALLS timed calls; prints the median call's
 * seconds and the fastest, then every call's seconds in the order they ran (so that a
 * reader can take the fastest of as many calls as an evaluation made).
 *
 *   gcc -O2 timing_floor.c -o timing_floor -ldl
 *   OMP_NUM_THREADS=T OMP_PROC_BIND=close OMP_PLACES=cores ./timing_floor kernel.so N CALLS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plain_timing.h"

typedef void (*kernel_fn)(double *, double *, double *, int, int, int);
enum { SETS = 4 };

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s KERNEL.so N CALLS\n", argv[0]);
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  kernel_fn kernel = (kernel_fn)dlsym(h, "matmul_optimized");
  if (!kernel) {
    fprintf(stderr, "%s defines no matmul_optimized\n", argv[1]);
    return 1;
  }
  int n = atoi(argv[2]), calls = atoi(argv[3]);
  if (n < 1 || calls < 1) return 2;
  size_t nn = (size_t)n * n;
  double *a[SETS], *b[SETS], *c = aligned_alloc(64, nn * sizeof(double));
  unsigned long long s = 12345;
  for (int k = 0; k < SETS; k++) {
    a[k] = aligned_alloc(64, nn * sizeof(double));
    b[k] = aligned_alloc(64, nn * sizeof(double));
    for (size_t i = 0; i < nn; i++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      a[k][i] = (double)(s >> 11) * 0x1.0p-53 * 2 - 1;
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      b[k][i] = (double)(s >> 11) * 0x1.0p-53 * 2 - 1;
    }
  }
  double *times = malloc(sizeof(double) * calls), *in_order = malloc(sizeof(double) * calls);
  kernel(a[0], b[0], c, n, n, n);
  for (int i = 0; i < calls; i++) {
    int k = (i + 1) % SETS;
    double t0 = now();
    kernel(a[k], b[k], c, n, n, n);
    times[i] = in_order[i] = now() - t0;
  }
  qsort(times, calls, sizeof(double), by_value);
  printf("%.9g %.9g\n", times[calls / 2], times[0]);
  for (int i = 0; i < calls; i++) printf("%.9g%c", in_order[i], i + 1 < calls ? ' ' : '\n');
  return 0;
}
