local plain = [[
double dot(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i = 0;", "i = 1;")),
  single = [[
double dot(int n, const double *x, const double *y) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += (float)x[i] * (float)y[i];
  return s;
}
]],
}
