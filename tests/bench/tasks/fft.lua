-- Kernels for fft's tests: a plain radix-2 FFT with a twiddle table, one that stops a stage
-- early, one in single precision.

-- The bit-reversed copy of x into `out` and the butterflies over it, with the twiddle table w
-- and `out` both of type `real`: the same in either precision.
local function stages(real, out)
  return ([[
  for (int i = 0, j = 0; i < n; ++i) {
    $out[2 * j] = x[2 * i];
    $out[2 * j + 1] = x[2 * i + 1];
    int bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
  }
  for (int len = 2; len <= n; len <<= 1) {
    int half = len >> 1, step = n / len;
    for (int s = 0; s < n; s += len)
      for (int k = 0; k < half; ++k) {
        $real wr = w[2 * k * step], wi = w[2 * k * step + 1];
        $real *a = $out + 2 * (s + k), *b = a + 2 * half;
        $real tr = wr * b[0] - wi * b[1], ti = wr * b[1] + wi * b[0];
        b[0] = a[0] - tr; b[1] = a[1] - ti;
        a[0] += tr; a[1] += ti;
      }
  }
]]):gsub("%$(%w+)", { real = real, out = out })
end

local plain = [[
#include <math.h>
#include <stdlib.h>
void fft(int n, const double *x, double *y) {
  double *w = malloc(sizeof(double) * n);  /* w[2k], w[2k+1]: exp(-2 pi i k / n), k < n/2 */
  for (int k = 0; k < n / 2; ++k) {
    w[2 * k] = cos(2 * M_PI * k / n);
    w[2 * k + 1] = -sin(2 * M_PI * k / n);
  }
]] .. stages("double", "y") .. [[
  free(w);
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("len <= n", "len < n")),
  single = [[
#include <math.h>
#include <stdlib.h>
void fft(int n, const double *x, double *y) {
  float *w = malloc(sizeof(float) * n), *z = malloc(sizeof(float) * 2 * n);
  for (int k = 0; k < n / 2; ++k) {
    w[2 * k] = cosf(2 * (float)M_PI * k / n);
    w[2 * k + 1] = -sinf(2 * (float)M_PI * k / n);
  }
]] .. stages("float", "z") .. [[
  for (int i = 0; i < 2 * n; ++i) y[i] = z[i];
  free(w);
  free(z);
}
]],
}
