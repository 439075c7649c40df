-- Layer normalisation of each row with a scale and a shift: two reductions and a pass.
return {
  name = "layernorm_rows", family = "normalisation", split = "train",
  statement = "For a row-major matrix x of rows x cols floats and vectors gamma and beta of cols floats, "
    .. "normalise each row: y[r][c] = (x[r][c] - mean) / sqrt(var + 1e-5) * gamma[c] + beta[c], mean and var "
    .. "the row's mean and biased variance (divided by cols). The launch: one block of 256 threads per row.",
  signature = 'extern "C" __global__ void layernorm_rows(const float *x, const float *gamma, const float *beta, '
    .. 'float *y, int rows, int cols)',
  entry = "layernorm_rows",
  sizes = { test = { rows = 16, cols = 100 }, train = { rows = 4096, cols = 1024 }, heldout = { rows = 3000, cols = 777 } },
  args = { { input = "x", count = "rows*cols" }, { input = "gamma", count = "cols" }, { input = "beta", count = "cols" },
           { output = "y", count = "rows*cols" }, { int = "rows" }, { int = "cols" } },
  launch = { grid = { "rows" }, block = { 256 } },
  reference = "layernorm_rows",
  tolerance = { atol = 2^-16, rtol = 2^-16,
                why = "outputs are at most about 3 in size; the mean and variance err by about sqrt(cols) u "
                   .. "relative and the rest by a few u: under 2^-16 absolute and relative together; bf16 misses it" },
  flops = "8*rows*cols", bytes = "8*rows*cols + 8*cols", roofline = "memory",
  straightforward = [[
__device__ float block_sum(float v, float *part) {
  part[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  float s = part[0];
  __syncthreads();
  return s;
}

extern "C" __global__ void layernorm_rows(const float *x, const float *gamma, const float *beta,
                                          float *y, int rows, int cols) {
  __shared__ float part[256];
  const float *in = x + (long)blockIdx.x * cols;
  float *out = y + (long)blockIdx.x * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += in[c];
  float mean = block_sum(s, part) / cols;
  float q = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q += (in[c] - mean) * (in[c] - mean);
  float inv = rsqrtf(block_sum(q, part) / cols + 1e-5f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = (in[c] - mean) * inv * gamma[c] + beta[c];
}
]],
}
