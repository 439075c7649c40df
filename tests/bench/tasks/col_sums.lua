-- Kernels for col_sums's tests: a plain row-order accumulation, one that skips row 0, one in
-- single precision.
local plain = [[
void col_sums(int m, int n, const double *A, double *s) {
  for (int j = 0; j < n; ++j) s[j] = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) s[j] += A[(long)i * n + j];
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i = 0; i < m", "i = 1; i < m")),
  single = [[
void col_sums(int m, int n, const double *A, double *s) {
  for (int j = 0; j < n; ++j) {
    float t = 0;
    for (int i = 0; i < m; ++i) t += (float)A[(long)i * n + j];
    s[j] = t;
  }
}
]],
}
