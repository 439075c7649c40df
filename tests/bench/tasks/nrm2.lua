local plain = [[
#include <math.h>
double nrm2(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  return sqrt(s);
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i < n;", "i < n - 1;")),
  single = [[
#include <math.h>
double nrm2(int n, const double *x) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += (float)x[i] * (float)x[i];
  return sqrtf(s);
}
]],
}
