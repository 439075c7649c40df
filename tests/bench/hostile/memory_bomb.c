/* expect: runtime_error | message: null pointer */
/* Allocates and touches 64 MB after 64 MB until malloc returns NULL under the limit. */
#include <stdlib.h>
#include <string.h>
char *volatile keep;
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    for (;;) {
        char *p = malloc(64 << 20);
        memset(p, 1, 64 << 20);
        keep = p;
    }
}
