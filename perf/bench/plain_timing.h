/* What the plain C programs of perf/bench (dgemm_plain.c, timing_floor.c, protocol_model.c)
 * time with: the monotonic clock in seconds, and qsort's ascending order of doubles. */
#ifndef PERF_BENCH_PLAIN_TIMING_H
#define PERF_BENCH_PLAIN_TIMING_H

#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
