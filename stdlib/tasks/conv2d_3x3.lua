-- A 3x3 2-D convolution (a correlation, as in CNNs) of a halo-padded image with a filter
-- given as an input: nine multiply-adds per output, three rows of reuse.
return {
  name = "conv2d_3x3",
  family = "convolution",
  split = "heldout",
  statement = "img is an (h+2)-by-(w+2) image stored row-major (img[r*(w+2) + c]) including a one-pixel halo, f a "
           .. "3x3 filter stored row-major (f[a*3 + b]); compute the h-by-w output (out[i*w + j], 0 <= i < h, "
           .. "0 <= j < w) of the correlation (the filter is not flipped): out[i*w + j] = sum over a, b in {0, 1, 2} "
           .. "of f[a*3 + b] * img[(i+a)*(w+2) + (j+b)].",
  prototype = "void conv2d_3x3(int h, int w, const double *img, const double *f, double *out)",
  sizes = { heldout = { h = 1531, w = 2039 }, test = { h = 37, w = 29 } },
  args = {
    h = { value = "h" },
    w = { value = "w" },
    img = { count = "(h+2)*(w+2)" },
    f = { count = 9 },
    out = { count = "h*w" },
  },
  flops = "18*h*w",
  bytes = "8*((h+2)*(w+2) + 9 + h*w)",
  roofline = "memory",
  bound = {
    factor = 18,
    why = "each output is a sum of 9 products: in any order, with or without FMA, its error is at most "
       .. "9 u (|f| * |img|)[i][j], the reference's as large again; single precision errs by about 2^-24 "
       .. "relative, 2^29 u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  reference = [[
void conv2d_3x3(int h, int w, const double *img, const double *f, double *out) {
  const long s = (long)w + 2;
  for (long i = 0; i < h; ++i)
    for (long j = 0; j < w; ++j) {
      double t = 0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) t += f[a * 3 + b] * img[(i + a) * s + j + b];
      out[i * w + j] = t;
    }
}
]],
}
