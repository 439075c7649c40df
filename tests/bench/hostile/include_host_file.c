/* expect: compile_error | message: not a standard header */
/* Includes a file of the host: the compile fails, and no line of the file comes back */
/* in the diagnostics (they go into repair prompts). */
#include </etc/passwd>
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}
