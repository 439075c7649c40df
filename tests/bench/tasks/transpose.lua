-- Kernels for transpose's tests: a plain copy, one that misses A's last column, one that
-- passes the values through float.
local plain = [[
void transpose(int m, int n, const double *A, double *B) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) B[(long)j * m + i] = A[(long)i * n + j];
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j < n;", "j < n - 1;")),
  single = [[
void transpose(int m, int n, const double *A, double *B) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) B[(long)j * m + i] = (float)A[(long)i * n + j];
}
]],
}
