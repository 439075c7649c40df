// The distributions of a task's inputs. Structured matrices are made well conditioned on
// purpose: their checks bound the error by the size alone (spec bounds say why), and a
// triangle a kernel must not read holds NaN, so reading it poisons the result.
#include "task/draw.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace bench {

namespace {

void uniform(const Keystream& key, uint32_t call, uint32_t stream, double lo, double hi, int64_t count, double* out) {
  key.fill_signed_unit(call, stream, out, static_cast<size_t>(count));
  if (lo == -1 && hi == 1) return;
  for (int64_t i = 0; i < count; ++i) out[i] = lo + (out[i] + 1) * 0.5 * (hi - lo);
}

// Symmetric, off-diagonal entries in [-1, 1), diagonal in [2n, 2n + 1): strictly
// diagonally dominant, so positive definite with eigenvalues in [n + 1, 3n] (Gershgorin):
// a condition number below 3.
void spd(const Keystream& key, uint32_t call, uint32_t stream, int64_t n, double* a) {
  key.fill_signed_unit(call, stream, a, static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) a[i * n + j] = a[j * n + i];
    a[i * n + i] = 2.0 * n + (a[i * n + i] + 1) * 0.5;
  }
}

// Triangular, diagonal in [1, 2), the other triangle's entries in [-1, 1) / (2n): each
// row's off-diagonal sum is below half its diagonal, so the matrix and its inverse have
// norms within a factor 3 of 1. The triangle outside is NaN.
void triangle(const Keystream& key, uint32_t call, uint32_t stream, int64_t n, bool lower, double* a) {
  key.fill_signed_unit(call, stream, a, static_cast<size_t>(n * n));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double& x = a[i * n + j];
      if (i == j) x = 1.5 + 0.5 * x;
      else if ((j < i) == lower) x /= 2.0 * n;
      else x = nan;
    }
}

// per_row distinct columns in each row, ascending (Floyd's sampling, then a sort).
void csr_columns(const Keystream& key, uint32_t call, uint32_t stream, const Draw& d, int32_t* out) {
  uint64_t word = 0;
  std::vector<int32_t> row;
  for (int64_t r = 0; r < d.rows; ++r) {
    row.clear();
    for (int64_t j = d.cols - d.per_row; j < d.cols; ++j) {
      int32_t t = static_cast<int32_t>(key.word(call, stream, word++) % uint64_t(j + 1));
      row.push_back(std::find(row.begin(), row.end(), t) == row.end() ? t : static_cast<int32_t>(j));
    }
    std::sort(row.begin(), row.end());
    std::copy(row.begin(), row.end(), out + r * d.per_row);
  }
}

}  // namespace

void draw_values(const Keystream& key, uint32_t call, uint32_t stream, const Draw& d, int64_t count, void* out) {
  auto* x = static_cast<double*>(out);
  if (d.dist == "uniform") uniform(key, call, stream, d.lo, d.hi, count, x);
  else if (d.dist == "spd") spd(key, call, stream, d.n, x);
  else if (d.dist == "lower" || d.dist == "upper") triangle(key, call, stream, d.n, d.dist == "lower", x);
  else if (d.dist == "csr_row_ptr")
    for (int64_t r = 0; r <= d.rows; ++r) static_cast<int32_t*>(out)[r] = static_cast<int32_t>(r * d.per_row);
  else if (d.dist == "csr_col_idx") csr_columns(key, call, stream, d, static_cast<int32_t*>(out));
}

}  // namespace bench
