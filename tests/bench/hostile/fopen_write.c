/* expect: library_violation | message: fopen */
#include <stdio.h>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    FILE *f = fopen("/tmp/engine-hostile-fopen", "w");
    if (f) { fputs("escaped\n", f); fclose(f); }
}
