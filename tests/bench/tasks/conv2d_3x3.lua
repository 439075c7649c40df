-- Kernels for conv2d_3x3's tests: a plain unrolled loop, one that strides the image by w
-- instead of w + 2, one in single precision.
local plain = [[
void conv2d_3x3(int h, int w, const double *img, const double *f, double *out) {
  int s = w + 2;
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      const double *p = img + i * s + j;
      out[i * w + j] = f[0] * p[0] + f[1] * p[1] + f[2] * p[2]
                     + f[3] * p[s] + f[4] * p[s + 1] + f[5] * p[s + 2]
                     + f[6] * p[2 * s] + f[7] * p[2 * s + 1] + f[8] * p[2 * s + 2];
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("s = w %+ 2;", "s = w;")),
  single = [[
void conv2d_3x3(int h, int w, const double *img, const double *f, double *out) {
  int s = w + 2;
  float g[9];
  for (int t = 0; t < 9; ++t) g[t] = f[t];
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < w; ++j) {
      const double *p = img + i * s + j;
      float t = 0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) t += g[a * 3 + b] * (float)p[a * s + b];
      out[i * w + j] = t;
    }
}
]],
}
