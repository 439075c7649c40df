-- LU factorisation without pivoting of a diagonally dominant matrix (right-looking or
-- blocked: BLAS-3 trailing updates), L and U in buffers of their own so that each is
-- checked against its own scale.
return {
  name = "lu_nopiv",
  family = "factorisation",
  split = "heldout",
  statement = "Compute the LU factorisation A = L * U without pivoting of the n-by-n matrix A (row-major, A[i*n + j]; "
           .. "strictly diagonally dominant, so no pivoting is needed): L unit lower triangular (ones on the "
           .. "diagonal, zeros above it) and U upper triangular (zeros below the diagonal), both written in full "
           .. "as row-major n-by-n matrices.",
  prototype = "void lu_nopiv(int n, const double *A, double *L, double *U)",
  sizes = { heldout = { n = 701 }, test = { n = 37 } },
  args = {
    n = { value = "n" },
    A = { count = "n*n", draw = { "dominant", n = "n" } },
    L = { count = "n*n" },
    U = { count = "n*n" },
  },
  flops = "2*n*n*n/3",
  bytes = "24*n*n",
  bound = {
    factor = "3*n",
    scale = "output",
    why = "A is not symmetric; its off-diagonal entries lie in [-1, 1) and its diagonal in [2n, 2n+1), so max|U| is a diagonal entry "
       .. "near 2n, U's off-diagonal entries stay below 2, the multipliers below 1/n and max|L| = 1. U_jj = A_jj "
       .. "minus j products whose sum is below 2: in any order (blocked updates included) the partial sums stay "
       .. "within [2n - 2, 2n + 3], so its error is below (n + 2) u max|U|; a multiplier is a quotient of such "
       .. "entries, within (n + 3) u of 1 = max|L|. Kernel and reference together: (2n + 8) u <= 3 n u times the "
       .. "buffer's largest entry for n >= 8. Single precision errs by about 2^-25 relative, 2^28 u, on U's "
       .. "diagonal and on every multiplier of L.",
  },
  techniques = { "register_blocking", "cache_blocking", "simd", "omp" },
  reference = [[
void lu_nopiv(int n, const double *A, double *L, double *U) {
  for (long i = 0; i < (long)n * n; ++i) U[i] = A[i];
  for (long i = 0; i < (long)n * n; ++i) L[i] = 0;
  for (int k = 0; k < n; ++k) {
    L[(long)k * n + k] = 1;
    for (int i = k + 1; i < n; ++i) {
      double l = U[(long)i * n + k] / U[(long)k * n + k];
      L[(long)i * n + k] = l;
      U[(long)i * n + k] = 0;
      for (int j = k + 1; j < n; ++j) U[(long)i * n + j] -= l * U[(long)k * n + j];
    }
  }
}
]],
}
