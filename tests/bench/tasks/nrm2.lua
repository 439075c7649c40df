return {
  plain = [[
#include <math.h>
double nrm2(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i] * x[i];
  return sqrt(s);
}
]],
  off_by_one = [[
#include <math.h>
double nrm2(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n - 1; ++i) s += x[i] * x[i];
  return sqrt(s);
}
]],
  single = [[
#include <math.h>
double nrm2(int n, const double *x) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += (float)x[i] * (float)x[i];
  return sqrtf(s);
}
]],
}
