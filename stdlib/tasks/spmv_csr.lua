-- y <- A x with A sparse in CSR form: irregular, indirect reads of x (memory-bound).
return {
  name = "spmv_csr",
  family = "sparse",
  split = "train",
  statement = "Compute y = A * x where A is a rows-by-cols sparse matrix in CSR form: the nonzeros of row i are "
           .. "val[p] in column col_idx[p] for row_ptr[i] <= p < row_ptr[i+1] (row_ptr has rows+1 entries, "
           .. "columns ascending within a row); A has rows * per_row nonzeros in all, per_row per row on average: a row may "
           .. "hold any number of them from none to cols; x has cols elements and y has rows elements.",
  prototype = "void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val, "
           .. "const double *x, double *y)",
  sizes = {
    train = { rows = 100000, cols = 100000, per_row = 27 },
    heldout = { rows = 150001, cols = 130003, per_row = 19 },
    test = { rows = 37, cols = 41, per_row = 5 },
  },
  args = {
    rows = { value = "rows" },
    cols = { value = "cols" },
    row_ptr = { count = "rows + 1", draw = { "csr_row_ptr", rows = "rows", cols = "cols", per_row = "per_row" } },
    col_idx = { count = "rows * per_row", draw = { "csr_col_idx", rows = "rows", cols = "cols", per_row = "per_row" } },
    val = { count = "rows * per_row" },
    x = { count = "cols" },
    y = { count = "rows" },
  },
  flops = "2*rows*per_row",
  bytes = "12*rows*per_row + 4*(rows + 1) + 8*(cols + rows)",
  roofline = "memory",
  bound = {
    factor = "2*min(cols, 16*per_row)",
    why = "each y[i] is a sum of as many products as its row has nonzeros, at most min(cols, 16 per_row) in the "
       .. "draw (its longest row; the others hold at most 2 per_row): in any order, with or without FMA, its error "
       .. "is at most that many u times (|A||x|)[i], the reference's as large again; single precision errs by "
       .. "about 2^-24 relative, far above 32 per_row u for every size here.",
  },
  techniques = { "register_blocking", "simd", "omp", "prefetch" },
  reference = [==[
void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val,
              const double *x, double *y) {
  (void)cols;
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (int p = row_ptr[i]; p < row_ptr[i + 1]; ++p) s += val[p] * x[col_idx[p]];
    y[i] = s;
  }
}
]==],
}
