-- Kernels for jacobi2d_9's tests: a plain sweep, one that indexes the halo with the
-- interior's row length, one in single precision.
local plain = [[
void jacobi2d_9(int n, const double *u, double *v) {
  int s = n + 2;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double *c = u + (i + 1) * s + (j + 1);
      v[i * n + j] = (4.0 * c[0] + 2.0 * (c[-s] + c[s] + c[-1] + c[1]) + (c[-s - 1] + c[-s + 1] + c[s - 1] + c[s + 1])) / 16.0;
    }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("s = n %+ 2;", "s = n + 1;")),
  single = [[
void jacobi2d_9(int n, const double *u, double *v) {
  int s = n + 2;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double *c = u + (i + 1) * s + (j + 1);
      float t = 4.0f * (float)c[0] + 2.0f * ((float)c[-s] + (float)c[s] + (float)c[-1] + (float)c[1]) +
                ((float)c[-s - 1] + (float)c[-s + 1] + (float)c[s - 1] + (float)c[s + 1]);
      v[i * n + j] = t / 16.0f;
    }
}
]],
}
