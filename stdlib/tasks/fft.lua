-- The forward discrete Fourier transform of n complex numbers, n a power of two
-- (Cooley-Tukey territory: strided butterflies, twiddle tables, bit reversal).
return {
  name = "fft",
  family = "fft",
  split = "heldout",
  statement = "Compute the forward discrete Fourier transform of n complex numbers, n a power of two: x and y hold "
           .. "n complex values interleaved (x[2*j] the real part of x_j, x[2*j+1] its imaginary part, likewise y), "
           .. "and y_k = sum over j = 0..n-1 of x_j * exp(-2*pi*i*j*k/n) for 0 <= k < n.",
  prototype = "void fft(int n, const double *x, double *y)",
  requires = { "n >= 2", "(n & (n - 1)) == 0" },
  sizes = { heldout = { n = 1 << 18 }, test = { n = 64 } },
  args = {
    n = { value = "n" },
    x = { count = "2*n" },
    y = { count = "2*n" },
  },
  flops = "5*n*log2(n)",
  bytes = "32*n",
  bound = {
    factor = "40*log2(n)*sqrt(n)",
    scale = "output",
    why = "a radix-2 (or radix-4, split-radix, Stockham) FFT with twiddles accurate to mu has norm-wise error "
       .. "||dy||_2 <= log2(n) eta ||y||_2 with eta = mu + gamma_4 (sqrt 2 + mu) (Higham, Thm 24.2). Twiddles "
       .. "from cos/sin of an angle below pi (the reference) have mu < 6 u, so eta < 12 u; below 2 pi, mu < 10 u "
       .. "and eta < 16 u. An element's error is at most ||dy||_2 and ||y||_2 <= sqrt(2n) max|y|, so kernel "
       .. "and reference together err by less than (16 + 12) sqrt(2) log2(n) sqrt(n) u max|y| < 40 log2(n) "
       .. "sqrt(n) u max|y|. Single precision errs by about 2^-26 max|y| (2^27 u) from rounding x alone, "
       .. "above the bound for every n up to 2^30. Twiddles from an unstable recurrence may miss it.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  yardsticks = {
    fftw = { link = { "fftw3_threads", "fftw3" }, source = [[
#include <fftw3.h>
static fftw_plan plan;
static int plan_n, plan_x_align, plan_y_align;
void fft(int n, const double *x, double *y) {
  /* FFTW_ESTIMATE plans without touching the arrays, and an out-of-place complex transform
     leaves its input as it was (FFTW_PRESERVE_INPUT, the default for c2c, said explicitly): x is
     only read, so casting away const is safe. A plan may run on other arrays of the same
     alignment (fftw_execute_dft), so it is kept by n and alignment: made once, in the engine's
     untimed first call (into scratch outputs, other pointers than the timed calls'). */
  fftw_complex *in = (fftw_complex *)(void *)(double *)x, *out = (fftw_complex *)(void *)y;
  const int xa = fftw_alignment_of((double *)x), ya = fftw_alignment_of(y);
  if (!plan || plan_n != n || plan_x_align != xa || plan_y_align != ya) {
    if (plan) fftw_destroy_plan(plan);
    plan = fftw_plan_dft_1d(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
    plan_n = n, plan_x_align = xa, plan_y_align = ya;
  }
  fftw_execute_dft(plan, in, out);
}
void yardstick_init(int threads) {
  fftw_init_threads();
  fftw_plan_with_nthreads(threads);
}
const char *yardstick_version(void) { return fftw_version; }
]] },
  },
  reference = [[
#include <math.h>
void fft(int n, const double *x, double *y) {
  int logn = 0;
  while ((1 << logn) < n) ++logn;
  for (int i = 0; i < n; ++i) {  /* bit-reversed copy */
    int r = 0;
    for (int b = 0; b < logn; ++b)
      if ((i >> b) & 1) r |= 1 << (logn - 1 - b);
    y[2L * r] = x[2L * i];
    y[2L * r + 1] = x[2L * i + 1];
  }
  const double pi = 3.14159265358979323846;
  for (int len = 2; len <= n; len *= 2) {  /* iterative radix-2 butterflies */
    int half = len / 2;
    for (int k = 0; k < half; ++k) {
      double wr = cos(2.0 * pi * k / len), wi = -sin(2.0 * pi * k / len);  /* twiddles computed directly */
      for (int s = 0; s < n; s += len) {
        double *a = y + 2L * (s + k), *b = y + 2L * (s + k + half);
        double tr = wr * b[0] - wi * b[1], ti = wr * b[1] + wi * b[0];
        b[0] = a[0] - tr;
        b[1] = a[1] - ti;
        a[0] += tr;
        a[1] += ti;
      }
    }
  }
}
]],
}
