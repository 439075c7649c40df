-- One Jacobi sweep of the 2-D 5-point Laplace stencil: a halo-padded grid in, its interior out
-- (memory-bound, three rows of reuse).
return {
  name = "jacobi2d_5",
  family = "stencil",
  split = "train",
  statement = "u is an (n+2)-by-(n+2) grid stored row-major (u[r*(n+2) + c]) whose outer ring is a fixed halo; "
           .. "compute one Jacobi sweep of the 5-point stencil into the n-by-n grid v (v[i*n + j], 0 <= i, j < n): "
           .. "v[i*n + j] = 0.25 * (u[i*(n+2) + j+1] + u[(i+2)*(n+2) + j+1] + u[(i+1)*(n+2) + j] + u[(i+1)*(n+2) + j+2]).",
  prototype = "void jacobi2d_5(int n, const double *u, double *v)",
  sizes = { train = { n = 1536 }, heldout = { n = 1777 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    u = { count = "(n+2)*(n+2)" },
    v = { count = "n*n" },
  },
  flops = "4*n*n",
  bytes = "8*((n+2)*(n+2) + n*n)",
  roofline = "memory",
  bound = {
    factor = 8,
    why = "each v element is a sum of 4 terms times 0.25 (exact): in any order, with or without FMA, "
       .. "its error is at most 4 u times the sum of the terms' magnitudes, the reference's as large "
       .. "again; single precision already errs by up to 2^-25 relative when it rounds u, 2^28 u.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" },
  reference = [[
void jacobi2d_5(int n, const double *u, double *v) {
  const long s = (long)n + 2;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j)
      v[i * n + j] = 0.25 * (u[i * s + j + 1] + u[(i + 2) * s + j + 1] + u[(i + 1) * s + j] + u[(i + 1) * s + j + 2]);
}
]],
}
