-- y = x^T: no arithmetic, all memory traffic, where coalescing both sides is the craft.
return {
  name = "transpose", family = "layout", split = "train",
  statement = "Transpose a row-major matrix x of rows x cols floats into y of cols x rows: y[c][r] = x[r][c]. "
    .. "The launch: blocks of 32 x 32 threads, a grid of ceil(cols / 32) x ceil(rows / 32) blocks (x along columns).",
  signature = 'extern "C" __global__ void transpose(const float *x, float *y, int rows, int cols)',
  entry = "transpose",
  sizes = { test = { rows = 33, cols = 47 }, train = { rows = 4096, cols = 4096 }, heldout = { rows = 3001, cols = 1999 } },
  args = { { input = "x", count = "rows*cols" }, { output = "y", count = "rows*cols" }, { int = "rows" }, { int = "cols" } },
  launch = { grid = { "ceil(cols / 32)", "ceil(rows / 32)" }, block = { 32, 32 } },
  reference = "transpose",
  tolerance = { atol = 0, rtol = 0, why = "a copy: every value exact" },
  flops = 0, bytes = "8*rows*cols", roofline = "memory",
  straightforward = [[
extern "C" __global__ void transpose(const float *x, float *y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) y[(long)c * rows + r] = x[(long)r * cols + c];
}
]],
}
