-- Kernels for spmv_csr's tests: a plain row loop, one whose inner loop runs one entry too
-- far, one in single precision; and a hostile one that assumes what the statement does not
-- promise (every row as long as the first: it reads row_ptr[1] once).
local plain = [==[
void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val,
              const double *x, double *y) {
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (int p = row_ptr[i]; p < row_ptr[i + 1]; ++p) s += val[p] * x[col_idx[p]];
    y[i] = s;
  }
}
]==]

return {
  hostile = {
    one_row_length = [==[
void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val,
              const double *x, double *y) {
  const long per = row_ptr[1];
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (long p = i * per; p < (i + 1) * per; ++p) s += val[p] * x[col_idx[p]];
    y[i] = s;
  }
}
]==],
  },
  plain = plain,
  off_by_one = (plain:gsub("p < row_ptr", "p <= row_ptr")),
  single = [==[
void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val,
              const double *x, double *y) {
  for (int i = 0; i < rows; ++i) {
    float s = 0;
    for (int p = row_ptr[i]; p < row_ptr[i + 1]; ++p) s += (float)val[p] * (float)x[col_idx[p]];
    y[i] = s;
  }
}
]==],
}
