/* A model of the evaluation's timing protocol, to see where it loses speed against a plain
 * loop (docs/performance.md): OpenBLAS or an i-k-j OpenMP kernel called in a loop on the
 * same or fresh inputs, with a gap between calls, and in a forked child that its parent
 * stops, loads with fresh inputs and continues around every call, as the evaluation does;
 * with the child's threads pinned, its pool woken, its inputs prefetched. One variant per
 * process (libgomp does not survive a fork), median of 40 timed calls:
 *
 *   gcc -O3 -fopenmp protocol_model.c -o protocol_model -ldl
 *   for v in plain fresh gap gapwake gapwakepre proto protowake protopin protopinwake protopinwakepre; do
 *     OPENBLAS_NUM_THREADS=16 ./protocol_model 256 16 blas $v; done
 *   for v in plain fresh gap gapwake proto protowake protopinwake; do
 *     OMP_NUM_THREADS=16 OMP_PROC_BIND=close OMP_PLACES=cores OPENBLAS_NUM_THREADS=1 ./protocol_model 256 16 ikj $v; done
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <omp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plain_timing.h"

typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double,
                         double *, int);
static dgemm_fn dgemm;
static int n, threads;
enum { CALLS = 40, SETS = 8 };

static void report(const char *name, double *t, double *h) {
  double flops = 2.0 * n * n * n;
  qsort(t, CALLS, sizeof *t, by_value);
  if (h) qsort(h, CALLS, sizeof *h, by_value);
  printf("%-44s best %7.1f median %7.1f worst %7.1f GFLOPS", name, flops / t[0] * 1e-9, flops / t[CALLS / 2] * 1e-9,
         flops / t[CALLS - 1] * 1e-9);
  if (h) printf("   outside: best %7.1f median %7.1f", flops / h[0] * 1e-9, flops / h[CALLS / 2] * 1e-9);
  printf("\n");
  fflush(stdout);
}

// The i-k-j kernel: the one reference_bench.lua and yardstick_bench.lua evaluate, compiled in.
#include "ikj_omp_kernel.c"

static int use_blas;
static void call(double *A, double *B, double *C) {
  if (use_blas)
    dgemm(101, 111, 111, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
  else
    matmul_optimized(A, B, C, n, n, n);
}

static double *pool;  // SETS input pairs
static double *A, *B, *C;
static void load(int c) {
  memcpy(A, pool + (size_t)(c % SETS) * 2 * n * n, sizeof(double) * n * n);
  memcpy(B, pool + (size_t)(c % SETS) * 2 * n * n + (size_t)n * n, sizeof(double) * n * n);
  for (long i = 0; i < (long)n * n; i++) C[i] = __builtin_nan("");
}
static double checksum(void) {
  double s = 0;
  for (long i = 0; i < (long)n * n; i++) s += C[i];
  return s;
}

static void pin_threads(void) {
  // every thread of this process to a core of its own, in order of creation
  DIR *d = opendir("/proc/self/task");
  int tids[512], k = 0;
  struct dirent *e;
  while ((e = readdir(d)) && k < 512)
    if (e->d_name[0] != '.') tids[k++] = atoi(e->d_name);
  closedir(d);
  for (int i = 0; i < k; i++)
    for (int j = i + 1; j < k; j++)
      if (tids[j] < tids[i]) { int t = tids[i]; tids[i] = tids[j]; tids[j] = t; }
  for (int i = 0; i < k; i++) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(i % threads, &s);
    sched_setaffinity(tids[i], sizeof s, &s);
  }
}

static void prefetch(void) {
  volatile double s = 0;
  for (long i = 0; i < (long)n * n; i += 8) s += A[i] + B[i];
}

static void wake(void) {
  if (use_blas) {
    // a small product that uses the pool
    static double a[96 * 96], b[96 * 96], c[96 * 96];
    dgemm(101, 111, 111, 96, 96, 96, 1.0, a, 96, b, 96, 0.0, c, 96);
  } else {
#pragma omp parallel
    { __asm__ volatile(""); }
  }
}

// in-process variants
static void inproc(const char *name, int fresh, int gap_us, int do_wake, int do_prefetch) {
  double t[CALLS];
  load(0);
  for (int i = 0; i < 5; i++) call(A, B, C);
  for (int c = 0; c < CALLS; c++) {
    if (fresh) load(c + 1);
    if (gap_us) usleep(gap_us);
    if (do_wake) wake();
    if (do_prefetch) prefetch();
    double t0 = now();
    call(A, B, C);
    t[c] = now() - t0;
  }
  report(name, t, NULL);
}

// the engine's protocol: a child process, stopped and continued around each call
static void protocol(const char *name, int pin, int do_wake, int do_prefetch) {
  int to[2], from[2];
  if (pipe(to) || pipe(from)) exit(1);
  load(0);
  pid_t pid = fork();
  if (pid == 0) {
    close(to[1]);
    close(from[0]);
    char cmd;
    int first = 1;
    while (read(to[0], &cmd, 1) == 1) {
      if (do_wake) wake();
      if (do_prefetch) prefetch();
      double t0 = now();
      call(A, B, C);
      double dt = now() - t0;
      if (first && pin) pin_threads();
      first = 0;
      if (write(from[1], &dt, sizeof dt) != sizeof dt) _exit(1);
    }
    _exit(0);
  }
  double t[CALLS], h[CALLS];
  int warm = 5;
  for (int c = 0; c < warm + CALLS; c++) {
    double s0 = now(), dt;
    if (write(to[1], "c", 1) != 1 || read(from[0], &dt, sizeof dt) != sizeof dt) exit(1);
    double el = now() - s0;
    kill(pid, SIGSTOP);
    int st;
    waitpid(pid, &st, WUNTRACED);
    if (checksum() == 12345.678) printf("!");
    load(c + 1);
    kill(pid, SIGCONT);
    if (c >= warm) t[c - warm] = dt, h[c - warm] = el;
  }
  close(to[1]);
  waitpid(pid, NULL, 0);
  close(from[0]);
  close(to[0]);
  close(from[1]);
  report(name, t, h);
}

int main(int argc, char **argv) {
  n = argc > 1 ? atoi(argv[1]) : 256;
  threads = argc > 2 ? atoi(argv[2]) : 16;
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  dgemm = (dgemm_fn)dlsym(lib, "cblas_dgemm");
  pool = malloc(sizeof(double) * SETS * 2 * n * n);
  for (long i = 0; i < (long)SETS * 2 * n * n; i++) pool[i] = rand() / (double)RAND_MAX * 2 - 1;
  A = mmap(0, sizeof(double) * n * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  B = mmap(0, sizeof(double) * n * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  C = mmap(0, sizeof(double) * n * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  const char *which = argc > 3 ? argv[3] : "blas";
  use_blas = strcmp(which, "blas") == 0;
  const char *v = argc > 4 ? argv[4] : "plain";
  if (!strcmp(v, "plain")) inproc("plain, same inputs", 0, 0, 0, 0);
  if (!strcmp(v, "fresh")) inproc("plain, fresh inputs", 1, 0, 0, 0);
  if (!strcmp(v, "gap")) inproc("fresh inputs + 1 ms gap", 1, 1000, 0, 0);
  if (!strcmp(v, "gapwake")) inproc("fresh + gap + wake", 1, 1000, 1, 0);
  if (!strcmp(v, "gapwakepre")) inproc("fresh + gap + wake + prefetch", 1, 1000, 1, 1);
  if (!strcmp(v, "proto")) protocol("protocol", 0, 0, 0);
  if (!strcmp(v, "protowake")) protocol("protocol + wake", 0, 1, 0);
  if (!strcmp(v, "protopin")) protocol("protocol + pin", 1, 0, 0);
  if (!strcmp(v, "protopinwake")) protocol("protocol + pin + wake", 1, 1, 0);
  if (!strcmp(v, "protopinwakepre")) protocol("protocol + pin + wake + prefetch", 1, 1, 1);
  return 0;
}
