/* expect: ok | sizes: 12 14 16 */
typedef struct { double *data; int rows, cols; } Mat;
typedef union { double d; long bits; } Pun;
static double at(Mat m, int r, int c) { return m.data[r * m.cols + c]; }
static void put(Mat *m, int r, int c, double v) { m->data[r * m->cols + c] = v; }
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
    Mat a = {A, M, K}, b = {B, K, N};
    Mat c;
    c.data = C; c.rows = M; c.cols = N;
    for (int i = 0; i < c.rows; i++)
        for (int j = 0; j < c.cols; j++) {
            double s = 0;
            for (int k = 0; k < a.cols; k++) s += at(a, i, k) * at(b, k, j);
            Pun p; p.d = s;
            put(&c, i, j, p.bits == 0 ? 0.0 : s);
        }
}
