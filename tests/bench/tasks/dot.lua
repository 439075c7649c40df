return {
  plain = [[
double dot(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}
]],
  off_by_one = [[
double dot(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 1; i < n; ++i) s += x[i] * y[i];
  return s;
}
]],
  single = [[
double dot(int n, const double *x, const double *y) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += (float)x[i] * (float)y[i];
  return s;
}
]],
}
