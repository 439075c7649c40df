-- One Jacobi sweep of the 3-D 7-point stencil: a halo-padded cube in, its interior out
-- (memory-bound; planes of reuse).
return {
  name = "jacobi3d_7",
  family = "stencil",
  split = "train",
  statement = "u is an (n+2)-by-(n+2)-by-(n+2) grid stored row-major (u[(r*(n+2) + s)*(n+2) + t]) whose outer layer "
           .. "is a fixed halo; compute one sweep of the 7-point stencil into the n-by-n-by-n grid v "
           .. "(v[(i*n + j)*n + k], 0 <= i, j, k < n): with U(r,s,t) = u[(r*(n+2) + s)*(n+2) + t], "
           .. "v[(i*n + j)*n + k] = 0.25 * U(i+1,j+1,k+1) + 0.125 * (U(i,j+1,k+1) + U(i+2,j+1,k+1) + "
           .. "U(i+1,j,k+1) + U(i+1,j+2,k+1) + U(i+1,j+1,k) + U(i+1,j+1,k+2)).",
  prototype = "void jacobi3d_7(int n, const double *u, double *v)",
  sizes = { train = { n = 126 }, heldout = { n = 141 }, test = { n = 19 } },
  args = {
    n = { value = "n" },
    u = { count = "(n+2)*(n+2)*(n+2)" },
    v = { count = "n*n*n" },
  },
  flops = "8*n*n*n",
  bytes = "8*((n+2)*(n+2)*(n+2) + n*n*n)",
  roofline = "memory",
  bound = {
    factor = 14,
    why = "the weights 1/4 and 1/8 are powers of two, so every weighted term is exact; each v element is a "
       .. "sum of 7 terms, whose error in any order, with or without FMA, is at most 7 u times the sum of "
       .. "their magnitudes, the reference's as large again; single precision errs by up to 2^-25 relative "
       .. "when it rounds u, 2^28 u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void jacobi3d_7(int n, const double *u, double *v) {
  const long s = (long)n + 2, p = s * s;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j)
      for (long k = 0; k < n; ++k) {
        const double *c = u + (i + 1) * p + (j + 1) * s + (k + 1);
        v[(i * n + j) * n + k] = 0.25 * c[0] + 0.125 * (c[-p] + c[p] + c[-s] + c[s] + c[-1] + c[1]);
      }
}
]],
}
