local plain = [[
#include <math.h>
double asum(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += fabs(x[i]);
  return s;
}
]]

return {
  plain = plain,
  off_by_one = (plain:gsub("i = 0;", "i = 1;")),
  single = [[
#include <math.h>
double asum(int n, const double *x) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += fabsf((float)x[i]);
  return s;
}
]],
}
