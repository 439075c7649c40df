return {
  plain = [[
#include <math.h>
double asum(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += fabs(x[i]);
  return s;
}
]],
  off_by_one = [[
#include <math.h>
double asum(int n, const double *x) {
  double s = 0;
  for (int i = 1; i < n; ++i) s += fabs(x[i]);
  return s;
}
]],
  single = [[
#include <math.h>
double asum(int n, const double *x) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += fabsf((float)x[i]);
  return s;
}
]],
}
