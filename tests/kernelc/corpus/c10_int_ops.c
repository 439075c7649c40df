/* expect: ok | sizes: 16 16 16 */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    unsigned int h = 2166136261u;
    for (int i = 0; i < M * N; i++) {
        int a = (int)(A[i % (M * K)] * 1000.0);
        int b = (int)(B[i % (K * N)] * 1000.0);
        unsigned u = (unsigned)a * 2654435761u;
        long l = (long)a * b - (b << 3) + (a >> 2) - (a % 7) + (b / 3);
        h ^= (unsigned)l;
        h *= 16777619u;
        short sh = (short)(a * 97);
        unsigned char uc = (unsigned char)(b * 13);
        signed char sc = (signed char)(a - b);
        C[i] = (double)(h >> 7) + (double)(u % 1000u) + sh + uc + sc + (double)(~a & 0xff) + (double)((a | b) ^ (a & b));
    }
}
