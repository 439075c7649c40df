-- The sum of each row: a reduction, one block a row.
return {
  name = "sum_rows", family = "reduction", split = "train",
  statement = "For a row-major matrix x of rows x cols floats, compute y[r] = the sum of x[r][0..cols-1]. "
    .. "The launch: one block of 256 threads per row (rows blocks in x).",
  signature = 'extern "C" __global__ void sum_rows(const float *x, float *y, int rows, int cols)',
  entry = "sum_rows",
  sizes = { test = { rows = 16, cols = 100 }, train = { rows = 4096, cols = 1024 }, heldout = { rows = 3000, cols = 777 } },
  args = { { input = "x", count = "rows*cols" }, { output = "y", count = "rows" }, { int = "rows" }, { int = "cols" } },
  launch = { grid = { "rows" }, block = { 256 } },
  reference = "sum_rows",
  tolerance = { atol = "cols * 2^-20", rtol = 0,
                why = "a float sum of cols values in [-1, 1) errs by about sqrt(cols) u times the partial sums "
                   .. "(at most cols/2): well under cols 2^-20 in any order; summing in bf16 (u = 2^-9) misses it" },
  flops = "rows*cols", bytes = "4*rows*cols + 4*rows", roofline = "memory",
  straightforward = [[
extern "C" __global__ void sum_rows(const float *x, float *y, int rows, int cols) {
  __shared__ float part[256];
  const float *row = x + (long)blockIdx.x * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}
]],
}
