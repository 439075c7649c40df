-- y = max(0, x + b): a bias added along rows and a ReLU, fused in one pass.
return {
  name = "relu_bias", family = "elementwise", split = "train",
  statement = "For a row-major matrix x of rows x cols floats and a vector b of cols floats, compute "
    .. "y[r][c] = max(0, x[r][c] + b[c]). The launch: blocks of 256 threads, ceil(rows * cols / 256) blocks in x.",
  signature = 'extern "C" __global__ void relu_bias(const float *x, const float *b, float *y, int rows, int cols)',
  entry = "relu_bias",
  sizes = { test = { rows = 16, cols = 100 }, train = { rows = 2048, cols = 1024 }, heldout = { rows = 1000, cols = 777 } },
  args = { { input = "x", count = "rows*cols" }, { input = "b", count = "cols" }, { output = "y", count = "rows*cols" },
           { int = "rows" }, { int = "cols" } },
  launch = { grid = { "ceil(rows * cols / 256)" }, block = { 256 } },
  reference = "relu_bias",
  tolerance = { atol = 0, rtol = 2^-23, why = "one sum of two floats on a grid of 2^-23: exact, one rounding allowed" },
  flops = "2*rows*cols", bytes = "8*rows*cols + 4*cols", roofline = "memory",
  straightforward = [[
extern "C" __global__ void relu_bias(const float *x, const float *b, float *y, int rows, int cols) {
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long)rows * cols) y[i] = fmaxf(0.0f, x[i] + b[i % cols]);
}
]],
}
