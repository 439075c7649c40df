local plain = [[
void trsv(int n, const double *L, const double *b, double *x) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int j = 0; j < i; ++j) s -= L[(long)i * n + j] * x[j];
    x[i] = s / L[(long)i * n + i];
  }
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("j < i;", "j < i - 1;")),
  single = [[
void trsv(int n, const double *L, const double *b, double *x) {
  for (int i = 0; i < n; ++i) {
    float s = (float)b[i];
    for (int j = 0; j < i; ++j) s -= (float)L[(long)i * n + j] * (float)x[j];
    x[i] = (float)(s / (float)L[(long)i * n + i]);
  }
}
]],
}
