-- blas2: gemv_n (row dot products), gemv_t and ger (axpy updates of rows), symv (the
-- lower triangle serves both halves) and trsv (forward substitution).
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

local function gen_ger(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  parts.head(em, rng, set, {pf = pf, comment = st.comment and "/* A += alpha * x * y^T, one row at a time */",
                            signature = "void ger(int m, int n, double alpha, const double *x, const double *y, double *A)"})
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open("for (long i = 0; i < m; " .. inc(st, "i") .. ")")
  local ax, a = parts.name(rng, {"ax", "s", "coef"}), parts.name(rng, {"a", "row", "Ai"})
  em:line(string.format("const double %s = alpha * x[i];", ax))
  em:line(string.format("double *%s = A + i * n;", a))
  local axv = "v" .. ax
  if V then em:line("const " .. V.ty .. " " .. axv .. " = " .. V.set1(ax) .. ";") end
  parts.row_update(em, rng, {V = V, U = set.register_blocking and (V and rng:pick({2, 4}) or rng:pick({2, 4, 8})) or 1,
                       j = "j", st = st, lo = "0", hi = "n", dst = a, src = "y", coef = ax, coefv = axv, pf = pf})
  em:close()
  em:close()
  return em:text()
end

-- gemv's cache blocks: columns (bj), and half the time rows as well (bi).
local function sample_gemv_cb(rng, set)
  if not set.cache_blocking then return nil end
  local cb = {form = parts.sample_cb_form(rng), rows = rng:chance(0.5)}
  cb.bj = parts.block_size(rng, {"BJ", "NB", "TILE"}, {64, 128, 256, 512}, cb.form)
  cb.bi = parts.block_size(rng, {"BI", "MB", "ROWS"}, {16, 32, 64}, cb.form)
  return cb
end

local function gen_gemv_t(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local cb = sample_gemv_cb(rng, set)
  local manual = set.omp and not cb
  parts.head(em, rng, set, {pf = pf, omp_h = manual, comment = st.comment and "/* y = A^T x as a sum of scaled rows of A */",
                            signature = "void gemv_t(int m, int n, const double *A, const double *x, double *y)"},
             cb and cb.bj, cb and cb.rows and cb.bi)
  local lo, hi = "0", "n"
  local closes = 0
  if cb then
    if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
    parts.open_blocks(em, "jb", "jend", "0", "n", cb.bj.name)
    lo, hi = "jb", "jend"
    closes = 1
  elseif manual then
    parts.open_thread_share(em, rng)
    lo, hi = "lo", "hi"
    closes = 1
  end
  em:line(string.format("for (long j = %s; j < %s; %s) y[j] = 0.0;", lo, hi, inc(st, "j")))
  local rows_lo, rows_hi = "0", "m"
  if cb and cb.rows then
    parts.open_blocks(em, "ib", "iend", "0", "m", cb.bi.name)
    rows_lo, rows_hi = "ib", "iend"
    closes = closes + 1
  end
  em:open(string.format("for (long i = %s; i < %s; %s)", rows_lo, rows_hi, inc(st, "i")))
  local xi, a = parts.name(rng, {"xi", "s", "xv_i"}), parts.name(rng, {"a", "row", "Ai"})
  em:line(string.format("const double %s = x[i];", xi))
  em:line(string.format("const double *%s = A + i * n;", a))
  if V then em:line("const " .. V.ty .. " v" .. xi .. " = " .. V.set1(xi) .. ";") end
  parts.row_update(em, rng, {V = V, U = set.register_blocking and (V and rng:pick({2, 4}) or rng:pick({2, 4, 8})) or 1,
                       j = "j", st = st, lo = lo, hi = hi, dst = "y", src = a, coef = xi, coefv = "v" .. xi, pf = pf})
  em:close()
  for _ = 1, closes do em:close() end
  em:close()
  return em:text()
end

local function gen_gemv_n(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local R = set.register_blocking and rng:pick({2, 2, 4}) or 1
  local cb = sample_gemv_cb(rng, set)
  local hsum, use_reduce = parts.sample_hsum(rng, V, isa)
  local rows_text = R > 1 and (R .. " rows at a time") or "one row at a time"
  parts.head(em, rng, set, {pf = pf, V = V, hsum = hsum, reduce = use_reduce,
                            comment = st.comment and ("/* y = A x: " .. rows_text .. " */"),
                            signature = "void gemv_n(int m, int n, const double *A, const double *x, double *y)"},
             cb and cb.bj, cb and cb.rows and cb.bi)
  local sname = parts.name(rng, {"s", "sum", "t"})
  local vname = parts.name(rng, {"acc", "vs", "vsum"})
  local pname = parts.name(rng, {"a", "row", "p"})
  local lo, hi = "0", "n"
  local closes = 0
  local omp_pending = set.omp
  local function omp_here()
    if omp_pending then em:pragma("#pragma omp parallel for" .. sched); omp_pending = false end
  end
  if cb and cb.rows then
    omp_here()
    parts.open_blocks(em, "ib", "iend", "0", "m", cb.bi.name)
    closes = closes + 1
  end
  if cb then
    parts.open_blocks(em, "jb", "jend", "0", "n", cb.bj.name)
    lo, hi = "jb", "jend"
    closes = closes + 1
  end
  -- a group of r rows starting at row expression `i`
  local function group(r, i)
    local sn, vn, pn = {}, {}, {}
    for q = 0, r - 1 do
      sn[q] = r == 1 and sname or (sname .. q)
      vn[q] = r == 1 and vname or (vname .. q)
      pn[q] = r == 1 and pname or (pname .. q)
      em:line(string.format("const double *%s = A + (%s) * n;", pn[q], ix(i, q)))
      local init = cb and string.format("jb == 0 ? 0.0 : y[%s]", ix(i, q)) or "0.0"
      em:line(string.format("double %s = %s;", sn[q], init))
    end
    if V then
      for q = 0, r - 1 do em:line(V.ty .. " " .. vn[q] .. " = " .. V.zero() .. ";") end
      em:line("long j;")
      em:open(string.format("for (j = %s; j + %d <= %s; j += %d)", lo, V.w, hi, V.w))
      if pf then em:line(parts.pf_stmt(pf, pn[0] .. " + j + " .. pf.dist, false)) end
      local xv = r > 1 and "xj" or nil
      if xv then em:line(V.ty .. " " .. xv .. " = " .. V.ld("x + j") .. ";") end
      for q = 0, r - 1 do
        em:line(vn[q] .. " = " .. V.fma(V.ld(pn[q] .. " + j"), xv or V.ld("x + j"), vn[q]) .. ";")
      end
      em:close()
      em:open(string.format("for (; j < %s; %s)", hi, inc(st, "j")))
      for q = 0, r - 1 do em:line(string.format("%s += %s[j] * x[j];", sn[q], pn[q])) end
      em:close()
      for q = 0, r - 1 do
        local h = use_reduce and ("_mm512_reduce_add_pd(" .. vn[q] .. ")") or (hsum .. "(" .. vn[q] .. ")")
        em:line(string.format("y[%s] = %s + %s;", ix(i, q), sn[q], h))
      end
    else
      em:open(string.format("for (long j = %s; j < %s; %s)", lo, hi, inc(st, "j")))
      if pf then em:line(parts.pf_stmt(pf, pn[0] .. " + j + " .. pf.dist, false)) end
      for q = 0, r - 1 do em:line(string.format("%s += %s[j] * x[j];", sn[q], pn[q])) end
      em:close()
      for q = 0, r - 1 do em:line(string.format("y[%s] = %s;", ix(i, q), sn[q])) end
    end
  end
  if cb and cb.rows then
    if R == 1 then
      em:open(string.format("for (long i = ib; i < iend; %s)", inc(st, "i")))
      group(1, "i")
      em:close()
    else
      em:line("long i;")
      em:open(string.format("for (i = ib; i + %d <= iend; i += %d)", R, R))
      group(R, "i")
      em:close()
      em:open(string.format("for (; i < iend; %s)", inc(st, "i")))
      group(1, "i")
      em:close()
    end
  else
    if R == 1 then
      omp_here()
      em:open(string.format("for (long i = 0; i < m; %s)", inc(st, "i")))
      group(1, "i")
      em:close()
    else
      em:line(string.format("const long mr = m - m %% %d;", R))
      omp_here()
      em:open(string.format("for (long i = 0; i < mr; i += %d)", R))
      group(R, "i")
      em:close()
      em:open(string.format("for (long i = mr; i < m; %s)", inc(st, "i")))
      group(1, "i")
      em:close()
    end
  end
  for _ = 1, closes do em:close() end
  em:close()
  return em:text()
end

-- symv: y[i] = (row i of the lower triangle) . x, then the strict lower triangle read as
-- the upper: y[j] += A[i][j] x[i] for j < i (over column ranges, so threads never share a y[j]).
local function gen_symv(rng, set, isa)
  local st, em, _, sched, V = parts.start(rng, set, isa)
  local rb = set.register_blocking
  local cb
  if set.cache_blocking then
    cb = {bj = parts.block_size(rng, {"BJ", "NB", "TILE"}, {32, 64, 128, 256})}
  end
  local manual = set.omp and not cb
  local hsum, reduce = parts.sample_hsum(rng, V, isa)
  parts.head(em, rng, set, {omp_h = manual, V = V, hsum = hsum, reduce = reduce,
                            comment = st.comment and "/* y = A x from the lower triangle: each stored entry is used twice */",
                            signature = "void symv(int n, const double *A, const double *x, double *y)"},
             cb and cb.bj)
  local a = parts.name(rng, {"a", "row", "Ai"})
  local out = parts.name(rng, {"s", "sum", "dotv"})
  local acc = parts.name(rng, {"acc", "vs", "vsum"})
  local xi = parts.name(rng, {"xi", "c", "xv_i"})
  local pre = parts.name(rng, {"r", "vd", "cv"})
  local flip = rng:chance(0.5)
  -- the rows: the diagonal and the lower triangle
  if st.comment then em:line("/* row i, columns 0..i */") end
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open(string.format("for (long i = 0; i < n; %s)", inc(st, "i")))
  em:line(string.format("const double *%s = A + i * n;", a))
  parts.dot_seg(em, {V = V, U = rb and rng:pick({1, 2, 4}) or 1, st = st, j = "j", p = a, x = "x", lo = "0",
               hi = "i + 1", out = out, acc = acc, sp = out .. "_", hsum = hsum, reduce = reduce})
  em:line(string.format("y[i] = %s;", out))
  em:close()
  -- the mirrored half
  if st.comment then em:line("/* the entries above the diagonal: column i of the lower triangle */") end
  local U = rb and (V and rng:pick({2, 4}) or rng:pick({2, 4, 8})) or 1
  local function row_body(first, lo, hi)
    em:open(string.format("for (long i = %s; i < n; %s)", first, inc(st, "i")))
    em:line(string.format("const double %s = x[i];", xi))
    em:line(string.format("const double *%s = A + i * n;", a))
    if V then em:line("const " .. V.ty .. " v" .. xi .. " = " .. V.set1(xi) .. ";") end
    local h = hi
    if hi ~= "i" then
      em:line(string.format("const long jh = i < %s ? i : %s;", hi, hi))
      h = "jh"
    end
    parts.axpy_seg(em, rng, {V = V, U = U, j = "j", st = st, lo = lo, hi = h, dst = "y", src = a, coef = xi,
                       coefv = "v" .. xi, pre = pre, flip = flip})
    em:close()
  end
  if cb then
    if set.omp then em:pragma("#pragma omp parallel for" .. (sched ~= "" and sched or " schedule(dynamic)")) end
    parts.open_blocks(em, "jb", "jend", "0", "n", cb.bj.name)
    row_body("jb + 1", "jb", "jend")
    em:close()
  elseif manual then
    parts.open_thread_share(em, rng)
    row_body("lo + 1", "lo", "hi")
    em:close()
  else
    row_body("1", "0", "i")
  end
  em:close()
  return em:text()
end

-- trsv: row by row (x[i] = (b[i] - L[i][:i] . x[:i]) / L[i][i]), or in blocks of rows
-- (left-looking: the panel left of the block, then the diagonal block; or right-looking:
-- solve the diagonal block, then update the rows below). No OpenMP: its spec lists none,
-- and each unknown depends on all the previous ones.
local function gen_trsv(rng, set, isa)
  local st, em, _, _, V = parts.start(rng, set, isa)
  local cb
  if set.cache_blocking then
    cb = {bs = parts.block_size(rng, {"BS", "NB", "TILE"}, {16, 32, 64}),
          right = rng:chance(0.5)}
  end
  local hsum, reduce = parts.sample_hsum(rng, V, isa)
  parts.head(em, rng, set, {V = V, hsum = hsum, reduce = reduce,
                            comment = st.comment and "/* forward substitution, L lower triangular */",
                            signature = "void trsv(int n, const double *L, const double *b, double *x)"},
             cb and cb.bs)
  local l = parts.name(rng, {"l", "row", "Li"})
  local out = parts.name(rng, {"s", "dot", "t"})
  local acc = parts.name(rng, {"acc", "vs", "vsum"})
  local U = parts.unroll(rng, set, V)
  local recip = rng:chance(0.3)
  local function solve(lhs) -- x[i] from lhs (b[i] or x[i]) minus the dot
    if recip then return string.format("x[i] = (%s - %s) * (1.0 / %s[i]);", lhs, out, l) end
    return string.format("x[i] = (%s - %s) / %s[i];", lhs, out, l)
  end
  local function dot(lo, hi)
    parts.dot_seg(em, {V = V, U = U, st = st, j = "j", p = l, x = "x", lo = lo, hi = hi, out = out, acc = acc,
                 sp = out .. "_", hsum = hsum, reduce = reduce})
  end
  local function rows(first, last, lo, hi, finish)
    em:open(string.format("for (long i = %s; i < %s; %s)", first, last, inc(st, "i")))
    em:line(string.format("const double *%s = L + i * n;", l))
    dot(lo, hi)
    em:line(finish)
    em:close()
  end
  if not cb then
    rows("0", "n", "0", "i", solve("b[i]"))
  elseif not cb.right then
    parts.open_blocks(em, "ib", "iend", "0", "n", cb.bs.name)
    if st.comment then em:line("/* the solved unknowns left of the block */") end
    rows("ib", "iend", "0", "ib", string.format("x[i] = b[i] - %s;", out))
    if st.comment then em:line("/* the diagonal block */") end
    rows("ib", "iend", "ib", "i", solve("x[i]"))
    em:close()
  else
    em:line(string.format("for (long i = 0; i < n; %s) x[i] = b[i];", inc(st, "i")))
    parts.open_blocks(em, "kb", "kend", "0", "n", cb.bs.name)
    if st.comment then em:line("/* solve the diagonal block */") end
    rows("kb", "kend", "kb", "i", solve("x[i]"))
    if st.comment then em:line("/* and take its unknowns out of the rows below */") end
    rows("kend", "n", "kb", "kend", string.format("x[i] -= %s;", out))
    em:close()
  end
  em:close()
  return em:text()
end

return {gen_ger = gen_ger, gen_gemv_t = gen_gemv_t, gen_gemv_n = gen_gemv_n, gen_symv = gen_symv, gen_trsv = gen_trsv}
