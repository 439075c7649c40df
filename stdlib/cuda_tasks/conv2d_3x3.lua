-- A 3x3 convolution over channels with zero padding: stencil reuse and a channel reduction.
return {
  name = "conv2d_3x3", family = "convolution", split = "heldout",
  statement = "For an input x of cin channels of h x w floats and weights wt of cout x cin x 3 x 3 floats "
    .. "(all row-major), compute y[o][i][j] = sum over ci, di, dj in 0..2 of wt[o][ci][di][dj] * "
    .. "x[ci][i + di - 1][j + dj - 1], x being 0 outside the image (stride 1, padding 1; a correlation, as in "
    .. "deep learning). The launch: blocks of 16 x 16 threads, a grid of ceil(w / 16) x ceil(h / 16) x cout blocks.",
  signature = 'extern "C" __global__ void conv2d_3x3(const float *x, const float *wt, float *y, int cin, int cout, '
    .. 'int h, int w)',
  entry = "conv2d_3x3",
  sizes = { test = { cin = 3, cout = 4, h = 9, w = 11 }, train = { cin = 64, cout = 64, h = 64, w = 64 },
            heldout = { cin = 48, cout = 40, h = 57, w = 61 } },
  args = { { input = "x", count = "cin*h*w" }, { input = "wt", count = "cout*cin*9" }, { output = "y", count = "cout*h*w" },
           { int = "cin" }, { int = "cout" }, { int = "h" }, { int = "w" } },
  launch = { grid = { "ceil(w / 16)", "ceil(h / 16)", "cout" }, block = { 16, 16 } },
  reference = "conv2d_3x3",
  tolerance = { atol = "cin * 9 * 2^-20", rtol = 0,
                why = "each output is a dot product of 9 cin terms in [-1, 1): as for matmul, its single-precision "
                   .. "error is near 9 cin u, under 9 cin 2^-20; TF32 or bf16 miss it" },
  flops = "18*cout*cin*h*w", bytes = "4*(cin*h*w + 9*cout*cin + cout*h*w)", roofline = "compute",
  straightforward = [[
extern "C" __global__ void conv2d_3x3(const float *x, const float *wt, float *y, int cin, int cout, int h, int w) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int o = blockIdx.z;
  if (i >= h || j >= w) return;
  float s = 0.0f;
  for (int ci = 0; ci < cin; ++ci)
    for (int di = 0; di < 3; ++di)
      for (int dj = 0; dj < 3; ++dj) {
        int ii = i + di - 1, jj = j + dj - 1;
        if (ii >= 0 && ii < h && jj >= 0 && jj < w)
          s += wt[((o * cin + ci) * 3 + di) * 3 + dj] * x[((long)ci * h + ii) * w + jj];
      }
  y[((long)o * h + i) * w + j] = s;
}
]],
}
