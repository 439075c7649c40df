-- C = A B in single precision: the compute-bound classic.
return {
  name = "matmul", family = "matmul", split = "train",
  statement = "Compute C = A B for row-major A (m x k), B (k x n) and C (m x n) in single precision, "
    .. "accumulating in single precision or wider (no TF32, no half precision). "
    .. "The launch: blocks of 16 x 16 threads, a grid of ceil(n / 16) x ceil(m / 16) blocks (x along columns of C).",
  signature = 'extern "C" __global__ void matmul(const float *a, const float *b, float *c, int m, int n, int k)',
  entry = "matmul",
  sizes = { test = { m = 33, n = 47, k = 29 }, train = { m = 1024, n = 1024, k = 1024 },
            heldout = { m = 1000, n = 999, k = 998 } },
  args = { { input = "a", count = "m*k" }, { input = "b", count = "k*n" }, { output = "c", count = "m*n" },
           { int = "m" }, { int = "n" }, { int = "k" } },
  launch = { grid = { "ceil(n / 16)", "ceil(m / 16)" }, block = { 16, 16 } },
  reference = "matmul",
  tolerance = { atol = "k * 2^-20", rtol = 0,
                why = "a dot product of k terms in [-1, 1) errs in single precision by about sqrt(k) u times its "
                   .. "partial sums (about sqrt(k)): near k u, under k 2^-20 in any order; TF32 (u = 2^-11) "
                   .. "errs by about k 2^-12 and misses it" },
  flops = "2*m*n*k", bytes = "4*(m*k + k*n + m*n)", roofline = "compute",
  straightforward = [[
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n) {
    float s = 0.0f;
    for (int p = 0; p < k; ++p) s += a[(long)row * k + p] * b[(long)p * n + col];
    c[(long)row * n + col] = s;
  }
}
]],
}
