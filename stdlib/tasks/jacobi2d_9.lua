-- One Jacobi sweep of a 2-D 9-point stencil (the binomial smoother 1/16 [1 2 1] x [1 2 1]):
-- a halo-padded grid in, its interior out (memory-bound, more arithmetic than the 5-point).
return {
  name = "jacobi2d_9",
  family = "stencil",
  split = "train",
  statement = "u is an (n+2)-by-(n+2) grid stored row-major (u[r*(n+2) + c]) whose outer ring is a fixed halo; "
           .. "compute one sweep of the 9-point stencil into the n-by-n grid v (v[i*n + j], 0 <= i, j < n): "
           .. "v[i*n + j] = sum over a, b in {-1, 0, 1} of w(a,b) * u[(i+1+a)*(n+2) + (j+1+b)], with weight "
           .. "w = 1/4 at the centre (a = b = 0), 1/8 at the four edge neighbours (|a| + |b| = 1) and 1/16 at the four corners.",
  prototype = "void jacobi2d_9(int n, const double *u, double *v)",
  sizes = { train = { n = 1536 }, heldout = { n = 1777 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    u = { count = "(n+2)*(n+2)" },
    v = { count = "n*n" },
  },
  flops = "17*n*n",
  bytes = "8*((n+2)*(n+2) + n*n)",
  roofline = "memory",
  bound = {
    factor = 18,
    why = "the weights are powers of two, so every weighted term is exact; each v element is a sum of 9 "
       .. "such terms, whose error in any order or grouping (separable passes included), with or without "
       .. "FMA, is at most 9 u times the sum of their magnitudes, the reference's as large again; single "
       .. "precision errs by up to 2^-25 relative when it rounds u, 2^28 u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void jacobi2d_9(int n, const double *u, double *v) {
  const long s = (long)n + 2;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const double *up = u + i * s + j, *mid = up + s, *dn = mid + s;
      v[i * n + j] = 0.25 * mid[1]
                   + 0.125 * (up[1] + dn[1] + mid[0] + mid[2])
                   + 0.0625 * (up[0] + up[2] + dn[0] + dn[2]);
    }
}
]],
}
