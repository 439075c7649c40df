-- C = A B with bfloat16 buffers and single-precision accumulation: the mixed-precision
-- GEMM of deep learning (KernelBench's half-precision matmuls), here held out.
return {
  name = "matmul_bf16", family = "matmul", split = "heldout",
  statement = "Compute C = A B for row-major A (m x k), B (k x n) and C (m x n) held as bfloat16: each element is "
    .. "an unsigned short, the upper 16 bits of an IEEE single (its value is __uint_as_float(bits << 16)). "
    .. "Accumulate in single precision or wider and round each element of C to the nearest bfloat16, ties to even. "
    .. "The launch: blocks of 16 x 16 threads, a grid of ceil(n / 16) x ceil(m / 16) blocks (x along columns of C).",
  signature = 'extern "C" __global__ void matmul_bf16(const unsigned short *a, const unsigned short *b, '
    .. 'unsigned short *c, int m, int n, int k)',
  entry = "matmul_bf16",
  sizes = { test = { m = 33, n = 47, k = 29 }, train = { m = 1024, n = 1024, k = 1024 },
            heldout = { m = 1000, n = 999, k = 998 } },
  args = { { input = "a", count = "m*k", dtype = "bf16" }, { input = "b", count = "k*n", dtype = "bf16" },
           { output = "c", count = "m*n", dtype = "bf16" }, { int = "m" }, { int = "n" }, { int = "k" } },
  launch = { grid = { "ceil(n / 16)", "ceil(m / 16)" }, block = { 16, 16 } },
  reference = "matmul_bf16",
  tolerance = { atol = "k * 2^-20", rtol = 2^-8,
                why = "the products of two bfloat16 values are exact in single precision, whose sum errs as in "
                   .. "matmul (under k 2^-20); rounding to the nearest bfloat16 errs by at most 2^-8 of the value. "
                   .. "Truncating instead errs by up to 2^-7, and accumulating in bfloat16 by about sqrt(k) 2^-9 "
                   .. "of the partial sums: both miss it" },
  flops = "2*m*n*k", bytes = "2*(m*k + k*n + m*n)", roofline = "compute",
  straightforward = [[
extern "C" __global__ void matmul_bf16(const unsigned short *a, const unsigned short *b, unsigned short *c,
                                       int m, int n, int k) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n) {
    float s = 0.0f;
    for (int p = 0; p < k; ++p)
      s += __uint_as_float((unsigned)a[(long)row * k + p] << 16) * __uint_as_float((unsigned)b[(long)p * n + col] << 16);
    unsigned u = __float_as_uint(s);
    u += 0x7fffu + ((u >> 16) & 1u);  // to the nearest bfloat16, ties to even
    c[(long)row * n + col] = (unsigned short)(u >> 16);
  }
}
]],
}
