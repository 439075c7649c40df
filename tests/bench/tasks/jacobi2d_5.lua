-- Kernels for jacobi2d_5's tests: a plain sweep, one whose column loop stops one short, one
-- in single precision.
local plain = [[
void jacobi2d_5(int n, const double *u, double *v) {
  int s = n + 2;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      v[(i - 1) * n + (j - 1)] = 0.25 * (u[(i - 1) * s + j] + u[(i + 1) * s + j] + u[i * s + j - 1] + u[i * s + j + 1]);
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j <= n;", "j < n;")),
  single = [[
void jacobi2d_5(int n, const double *u, double *v) {
  int s = n + 2;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      v[(i - 1) * n + (j - 1)] = 0.25f * ((float)u[(i - 1) * s + j] + (float)u[(i + 1) * s + j] +
                                          (float)u[i * s + j - 1] + (float)u[i * s + j + 1]);
}
]],
}
