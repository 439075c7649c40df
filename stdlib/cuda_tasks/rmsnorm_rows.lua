-- RMS normalisation of each row with a weight: one reduction and a pass.
return {
  name = "rmsnorm_rows", family = "normalisation", split = "heldout",
  statement = "For a row-major matrix x of rows x cols floats and a vector w of cols floats, compute "
    .. "y[r][c] = x[r][c] / sqrt(mean over j of x[r][j]^2 + 1e-6) * w[c]. "
    .. "The launch: one block of 256 threads per row (rows blocks in x).",
  signature = 'extern "C" __global__ void rmsnorm_rows(const float *x, const float *w, float *y, int rows, int cols)',
  entry = "rmsnorm_rows",
  sizes = { test = { rows = 16, cols = 100 }, train = { rows = 4096, cols = 1024 }, heldout = { rows = 3000, cols = 777 } },
  args = { { input = "x", count = "rows*cols" }, { input = "w", count = "cols" }, { output = "y", count = "rows*cols" },
           { int = "rows" }, { int = "cols" } },
  launch = { grid = { "rows" }, block = { 256 } },
  reference = "rmsnorm_rows",
  tolerance = { atol = 2^-16, rtol = 2^-16,
                why = "outputs are at most about 2 in size; the mean square errs by about sqrt(cols) u relative, "
                   .. "the rest by a few u: under 2^-16; bf16 misses it" },
  flops = "4*rows*cols", bytes = "8*rows*cols + 4*cols", roofline = "memory",
  straightforward = [[
extern "C" __global__ void rmsnorm_rows(const float *x, const float *w, float *y, int rows, int cols) {
  __shared__ float part[256];
  const float *in = x + (long)blockIdx.x * cols;
  float *out = y + (long)blockIdx.x * cols;
  float q = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q += in[c] * in[c];
  part[threadIdx.x] = q;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  float inv = rsqrtf(part[0] / cols + 1e-6f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = in[c] * inv * w[c];
}
]],
}
