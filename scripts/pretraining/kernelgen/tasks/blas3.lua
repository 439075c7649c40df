-- blas3: gemm_tn, gemm_batched, trmm and trsm (rows of C as sums of scaled rows of B,
-- row_update), syrk (dot products of rows of A, dot_seg).
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local etasks = require "engine.tasks"
local parts = require "kernelgen.tasks.parts"
local inc = parts.inc

-- Cache blocks over the inner dimension (kb: p) and/or the columns (nb: j).
local function sample_blas3_cb(rng, set)
  if not set.cache_blocking then return nil end
  local which = rng:pick({"p", "j", "both"})
  local cb = {form = parts.sample_cb_form(rng)}
  if which ~= "j" then cb.kb = parts.block_size(rng, {"KB", "KC", "PB"}, {32, 64, 128, 256}, cb.form) end
  if which ~= "p" then cb.nb = parts.block_size(rng, {"NB", "BJ", "NC"}, {32, 64, 128, 256}, cb.form) end
  return cb
end

-- for p in [lo, hi), tiled by kb (a block_size) when given; body() writes the loop's body.
local function p_loop(em, st, lo, hi, kb, body)
  if kb then
    parts.open_blocks(em, "pb", "pend", lo, hi, kb.name)
    em:open(string.format("for (long p = pb; p < pend; %s)", inc(st, "p")))
    body()
    em:close()
    em:close()
  else
    em:open(string.format("for (long p = %s; p < %s; %s)", lo, hi, inc(st, "p")))
    body()
    em:close()
  end
end

-- Over the column tiles [jb, jend) when nb is given, else over [0, n): body(lo, hi).
local function col_tiles(em, nb, body)
  if not nb then return body("0", "n") end
  parts.open_blocks(em, "jb", "jend", "0", "n", nb.name)
  body("jb", "jend")
  em:close()
end

-- One row `c` of the product: c[lo..hi) += sum over p of coef(p) * (src row p).
local function scaled_rows(em, rng, r)
  p_loop(em, r.st, r.plo, r.phi, r.kb, function()
    em:line(string.format("const double %s = %s;", r.coef, r.coef_expr))
    em:line(string.format("const double *%s = %s + p * %s;", r.src, r.base, r.ld))
    if r.V then em:line("const " .. r.V.ty .. " v" .. r.coef .. " = " .. r.V.set1(r.coef) .. ";") end
    parts.row_update(em, rng, {V = r.V, U = r.U, j = "j", st = r.st, lo = r.lo, hi = r.hi, dst = r.dst, src = r.src,
                         coef = r.coef, coefv = "v" .. r.coef})
  end)
end

-- gemm_tn (C = A^T B) and trmm (C = L B, p <= i): row i of C, zeroed, then the scaled rows of B.
local function gen_rows_product(rng, name, set, isa)
  local st, em, _, sched, V = parts.start(rng, set, isa)
  local U = parts.unroll(rng, set, V)
  local cb = sample_blas3_cb(rng, set)
  local tn = name == "gemm_tn"
  parts.head(em, rng, set, {comment = st.comment and (tn and "/* C = A^T B: row i of C sums the rows of B scaled by column i of A */"
                                                          or "/* C = L B: row i of C sums rows 0..i of B scaled by row i of L */"),
                            signature = etasks.get(name).prototype},
             cb and cb.kb, cb and cb.nb)
  local c = parts.name(rng, {"c", "Ci", "crow"})
  local coef = parts.name(rng, {"a", "s", "coef"})
  local src = parts.name(rng, {"b", "Bp", "brow"})
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open(string.format("for (long i = 0; i < m; %s)", inc(st, "i")))
  em:line(string.format("double *%s = C + i * n;", c))
  em:line(string.format("for (long j = 0; j < n; %s) %s[j] = 0.0;", inc(st, "j"), c))
  col_tiles(em, cb and cb.nb, function(lo, hi)
    scaled_rows(em, rng, {st = st, V = V, U = U, kb = cb and cb.kb, plo = "0", phi = tn and "k" or "i + 1",
                          coef = coef, coef_expr = tn and "A[p * m + i]" or "L[i * m + p]", src = src, base = "B",
                          ld = "n", lo = lo, hi = hi, dst = c})
  end)
  em:close()
  em:close()
  return em:text()
end

-- gemm_batched: one small product after another (OpenMP over the batch).
local function gen_gemm_batched(rng, set, isa)
  local st, em, _, sched, V = parts.start(rng, set, isa)
  local U = parts.unroll(rng, set, V)
  parts.head(em, rng, set, {comment = st.comment and "/* C_b = A_b B_b for each product of the batch, row by row */",
                            signature = etasks.get("gemm_batched").prototype})
  local t = parts.name(rng, {"t", "bt", "e"})
  local names = rng:pick({{"Ab", "Bb", "Cb"}, {"a", "bb", "c"}, {"pa", "pb_", "pc"}})
  local c = parts.name(rng, {"ci", "crow", "out"})
  local coef = parts.name(rng, {"aip", "s", "coef"})
  local src = parts.name(rng, {"brow", "bp", "src"})
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open(string.format("for (long %s = 0; %s < batch; %s)", t, t, inc(st, t)))
  em:line(string.format("const double *%s = A + %s * m * k;", names[1], t))
  em:line(string.format("const double *%s = B + %s * k * n;", names[2], t))
  em:line(string.format("double *%s = C + %s * m * n;", names[3], t))
  em:open(string.format("for (long i = 0; i < m; %s)", inc(st, "i")))
  em:line(string.format("double *%s = %s + i * n;", c, names[3]))
  em:line(string.format("for (long j = 0; j < n; %s) %s[j] = 0.0;", inc(st, "j"), c))
  scaled_rows(em, rng, {st = st, V = V, U = U, plo = "0", phi = "k", coef = coef,
                        coef_expr = names[1] .. "[i * k + p]", src = src, base = names[2], ld = "n",
                        lo = "0", hi = "n", dst = c})
  em:close()
  em:close()
  em:close()
  return em:text()
end

-- trsm: forward substitution on rows of X, over the columns [lo, hi) (column tiles or a
-- thread's share: the columns are independent, the rows are not).
local function gen_trsm(rng, set, isa)
  local st, em, _, sched, V = parts.start(rng, set, isa)
  local U = parts.unroll(rng, set, V)
  local cb = sample_blas3_cb(rng, set)
  local manual = set.omp and not (cb and cb.nb)
  parts.head(em, rng, set, {omp_h = manual,
                            comment = st.comment and "/* L X = B by forward substitution, all right-hand sides of a row at once */",
                            signature = etasks.get("trsm").prototype},
             cb and cb.kb, cb and cb.nb)
  local x = parts.name(rng, {"x", "xi", "row"})
  local coef = parts.name(rng, {"l", "lip", "f"})
  local src = parts.name(rng, {"xp", "prev", "xr"})
  local recip = rng:chance(0.5)
  local function rows(lo, hi)
    em:open(string.format("for (long i = 0; i < m; %s)", inc(st, "i")))
    em:line(string.format("double *%s = X + i * n;", x))
    em:line(string.format("for (long j = %s; j < %s; %s) %s[j] = B[i * n + j];", lo, hi, inc(st, "j"), x))
    scaled_rows(em, rng, {st = st, V = V, U = U, kb = cb and cb.kb, plo = "0", phi = "i", coef = coef,
                          coef_expr = "-L[i * m + p]", src = src, base = "X", ld = "n", lo = lo, hi = hi, dst = x})
    if recip then
      em:line("const double r = 1.0 / L[i * m + i];")
      em:line(string.format("for (long j = %s; j < %s; %s) %s[j] *= r;", lo, hi, inc(st, "j"), x))
    else
      em:line("const double d = L[i * m + i];")
      em:line(string.format("for (long j = %s; j < %s; %s) %s[j] /= d;", lo, hi, inc(st, "j"), x))
    end
    em:close()
  end
  if cb and cb.nb then
    if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
    col_tiles(em, cb.nb, rows)
  elseif manual then
    parts.open_thread_share(em, rng)
    rows("lo", "hi")
    em:close()
  else
    rows("0", "n")
  end
  em:close()
  return em:text()
end

-- syrk: C[i][j] = C[j][i] = (row i of A) . (row j of A) for j <= i; cache blocking tiles
-- (i, j) into square blocks on and below the diagonal.
local function gen_syrk(rng, set, isa)
  local st, em, _, sched, V = parts.start(rng, set, isa)
  local bs
  if set.cache_blocking then
    bs = parts.block_size(rng, {"BS", "NB", "TILE"}, {16, 32, 64})
  end
  local hsum, reduce = parts.sample_hsum(rng, V, isa)
  local U = parts.unroll(rng, set, V)
  parts.head(em, rng, set, {V = V, hsum = hsum, reduce = reduce,
                            comment = st.comment and "/* C = A A^T: the lower triangle's dot products, mirrored */",
                            signature = "void syrk(int n, int k, const double *A, double *C)"},
             bs)
  local ai, aj = rng:pick({{"ai", "aj"}, {"x", "y"}, {"ri", "rj"}})[1], nil
  aj = ai == "ai" and "aj" or (ai == "x" and "y" or "rj")
  local out = parts.name(rng, {"s", "sum", "dotv"})
  local acc = parts.name(rng, {"acc", "vs", "vsum"})
  local two = rng:chance(0.5)
  local function pair(jlo, jcond)
    em:open(string.format("for (long j = %s; %s; %s)", jlo, jcond, inc(st, "j")))
    em:line(string.format("const double *%s = A + j * k;", aj))
    parts.dot_seg(em, {V = V, U = U, st = st, j = "p", p = ai, x = aj, lo = "0", hi = "k", out = out, acc = acc,
                 sp = out .. "_", hsum = hsum, reduce = reduce})
    if two then
      em:line(string.format("C[i * n + j] = %s;", out))
      em:line(string.format("C[j * n + i] = %s;", out))
    else
      em:line(string.format("C[i * n + j] = C[j * n + i] = %s;", out))
    end
    em:close()
  end
  local dyn = sched ~= "" and sched or rng:pick({" schedule(dynamic)", " schedule(dynamic, 1)", " schedule(guided)", ""})
  if bs then
    if set.omp then em:pragma("#pragma omp parallel for" .. dyn) end
    parts.open_blocks(em, "ib", "iend", "0", "n", bs.name)
    em:open(string.format("for (long jb = 0; jb <= ib; jb += %s)", bs.name))
    em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", bs.name, bs.name))
    em:open(string.format("for (long i = ib; i < iend; %s)", inc(st, "i")))
    em:line(string.format("const double *%s = A + i * k;", ai))
    pair("jb", "j < jend && j <= i")
    em:close()
    em:close()
    em:close()
  else
    if set.omp then em:pragma("#pragma omp parallel for" .. dyn) end
    em:open(string.format("for (long i = 0; i < n; %s)", inc(st, "i")))
    em:line(string.format("const double *%s = A + i * k;", ai))
    pair("0", "j <= i")
    em:close()
  end
  em:close()
  return em:text()
end

return {gen_rows_product = gen_rows_product, gen_gemm_batched = gen_gemm_batched, gen_trsm = gen_trsm, gen_syrk = gen_syrk}
