-- Softmax of each row: a max and a sum reduction, then a pass that writes.
return {
  name = "softmax_rows", family = "normalisation", split = "train",
  statement = "For a row-major matrix x of rows x cols floats, compute each row's softmax: "
    .. "y[r][c] = exp(x[r][c] - m) / sum over j of exp(x[r][j] - m), m the row's maximum. "
    .. "The launch: one block of 256 threads per row (rows blocks in x).",
  signature = 'extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols)',
  entry = "softmax_rows",
  sizes = { test = { rows = 16, cols = 100 }, train = { rows = 4096, cols = 1024 }, heldout = { rows = 3000, cols = 777 } },
  args = { { input = "x", count = "rows*cols" }, { output = "y", count = "rows*cols" }, { int = "rows" }, { int = "cols" } },
  launch = { grid = { "rows" }, block = { 256 } },
  reference = "softmax_rows",
  tolerance = { atol = 2^-30, rtol = 2^-16,
                why = "expf is within 2 ulp and the row's sum of positive terms errs by about sqrt(cols) u: "
                   .. "each output within a few tens of u relative, under 2^-16; bf16 (2^-9) misses it" },
  flops = "5*rows*cols", bytes = "8*rows*cols", roofline = "memory",
  straightforward = [[
extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols) {
  __shared__ float part[256];
  const float *in = x + (long)blockIdx.x * cols;
  float *out = y + (long)blockIdx.x * cols;
  float m = __int_as_float(0xff800000);  // -infinity
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, in[c]);
  part[threadIdx.x] = m;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + half]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(in[c] - m);
  part[threadIdx.x] = s;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  s = part[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(in[c] - m) / s;
}
]],
}
