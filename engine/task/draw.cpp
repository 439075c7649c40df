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

// A general matrix, strictly diagonally dominant by rows and by columns: entries drawn
// as spd's (off-diagonal in [-1, 1), diagonal in [2n, 2n + 1)) but each one on its own,
// so that the matrix is not symmetric: a kernel promised only dominance may assume only
// that (elimination keeps it, so no pivoting is needed and the factors stay bounded).
void dominant(const Keystream& key, uint32_t call, uint32_t stream, int64_t n, double* a) {
  key.fill_signed_unit(call, stream, a, static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) a[i * n + i] = 2.0 * n + (a[i * n + i] + 1) * 0.5;
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

// The stream of a CSR pattern's row lengths: a buffer number no parameter has, so that
// the row pointer and the column indices (parameters of their own) draw the same lengths.
constexpr uint32_t kPatternStream = 0xffffffffu;

// A CSR pattern's row lengths: rows * per_row nonzeros in all (the spec's flops and bytes
// count them), spread unevenly: random moves between rows (an ordinary row holds at most
// min(cols, 2 per_row)), one row of min(cols, 16 per_row, all of them) and about one row in 32 empty
// (at least one), so that no kernel may take a row's length from another's. With
// per_row = cols every row is full and nothing can move.
std::vector<int64_t> csr_lengths(const Keystream& key, uint32_t call, const Draw& d) {
  const int64_t rows = d.rows, per = d.per_row;
  std::vector<int64_t> len(static_cast<size_t>(rows), per);
  if (rows < 2 || per == 0) return len;
  uint64_t word = 0;
  auto pick = [&](int64_t n) { return static_cast<int64_t>(key.word(call, kPatternStream, word++) % uint64_t(n)); };
  const int64_t cap = std::min(d.cols, 2 * per);
  for (int64_t i = 0; i < rows; ++i) {  // random moves between rows
    const int64_t a = pick(rows), b = pick(rows);
    const int64_t room = std::min(len[a], cap - len[b]);
    if (a == b || room <= 0) continue;
    const int64_t t = pick(room + 1);
    len[a] -= t;
    len[b] += t;
  }
  // One long row, its entries taken one at a time from the others.
  const int64_t longest = std::min({d.cols, 16 * per, rows * per}), at = pick(rows);
  for (int64_t need = longest - len[at]; need > 0;) {
    const int64_t start = pick(rows);
    for (int64_t k = 0; k < rows && need > 0; ++k) {
      const int64_t r = (start + k) % rows;
      if (r != at && len[r] > 0) --len[r], --need, ++len[at];
    }
  }
  // Empty rows, their entries moved to rows with room (never the long one).
  for (int64_t e = std::max<int64_t>(1, rows / 32); e > 0; --e) {
    int64_t r = pick(rows);
    while (r == at) r = pick(rows);
    const int64_t start = pick(rows);
    for (int64_t k = 0; k < rows && len[r] > 0; ++k) {
      const int64_t to = (start + k) % rows;
      if (to == r || to == at || len[to] >= cap) continue;
      const int64_t t = std::min(len[r], cap - len[to]);
      len[r] -= t;
      len[to] += t;
    }
  }
  return len;
}

// Each row's columns: distinct, ascending (Floyd's sampling, then a sort).
void csr_columns(const Keystream& key, uint32_t call, uint32_t stream, const Draw& d, int32_t* out) {
  const std::vector<int64_t> len = csr_lengths(key, call, d);
  uint64_t word = 0;
  std::vector<int32_t> row;
  for (int64_t r = 0; r < d.rows; ++r) {
    row.clear();
    for (int64_t j = d.cols - len[r]; j < d.cols; ++j) {
      int32_t t = static_cast<int32_t>(key.word(call, stream, word++) % uint64_t(j + 1));
      row.push_back(std::find(row.begin(), row.end(), t) == row.end() ? t : static_cast<int32_t>(j));
    }
    std::sort(row.begin(), row.end());
    out = std::copy(row.begin(), row.end(), out);
  }
}

void csr_row_ptr(const Keystream& key, uint32_t call, const Draw& d, int32_t* out) {
  const std::vector<int64_t> len = csr_lengths(key, call, d);
  int64_t p = 0;
  out[0] = 0;
  for (int64_t r = 0; r < d.rows; ++r) out[r + 1] = static_cast<int32_t>(p += len[r]);
}

}  // namespace

void draw_values(const Keystream& key, uint32_t call, uint32_t stream, const Draw& d, int64_t count, void* out) {
  auto* x = static_cast<double*>(out);
  if (d.dist == "uniform") uniform(key, call, stream, d.lo, d.hi, count, x);
  else if (d.dist == "spd") spd(key, call, stream, d.n, x);
  else if (d.dist == "lower" || d.dist == "upper") triangle(key, call, stream, d.n, d.dist == "lower", x);
  else if (d.dist == "dominant") dominant(key, call, stream, d.n, x);
  else if (d.dist == "csr_row_ptr") csr_row_ptr(key, call, d, static_cast<int32_t*>(out));
  else if (d.dist == "csr_col_idx") csr_columns(key, call, stream, d, static_cast<int32_t*>(out));
}

}  // namespace bench
