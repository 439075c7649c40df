-- Kernels for jacobi3d_7's tests: a plain sweep, one that skips the last plane, one in
-- single precision.
local plain = [[
void jacobi3d_7(int n, const double *u, double *v) {
  long s = n + 2, p = s * s;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        const double *c = u + (i + 1) * p + (j + 1) * s + k + 1;
        v[((long)i * n + j) * n + k] = 0.25 * c[0] + 0.125 * (c[-1] + c[1] + c[-s] + c[s] + c[-p] + c[p]);
      }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < n;", "i < n - 1;")),
  -- the same sweep with its update in float
  single = (plain:gsub("0%.25 %* c%[0%][^\n]*", [[
0.25f * (float)c[0] +
            0.125f * ((float)c[-1] + (float)c[1] + (float)c[-s] + (float)c[s] + (float)c[-p] + (float)c[p]);]])),
}
