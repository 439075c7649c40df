-- scan: prefix_sum, col_sums.
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

-- Scans x[lo..hi) into y with the running sum `s` (a declared double): scalar, small
-- blocks of U scanned in a local array (register blocking: loops starting at the strided
-- index), or vectors scanned in register by shifted reloads from a zero-padded buffer
-- (U vectors: register blocking), the carry added as a broadcast.
local function scan_seg(em, rng, c)
  local V, U, st, s, i = c.V, c.U, c.st, c.s, c.i
  local function pfline()
    if c.pf then em:line(parts.pf_stmt(c.pf, "x + " .. i .. " + " .. c.pf.dist, false)) end
  end
  local function scalar_step(idx) return string.format("%s += x[%s]; y[%s] = %s;", s, idx, idx, s) end
  if not V and U == 1 then
    em:open(string.format("for (long %s = %s; %s < %s; %s)", i, c.lo, i, c.hi, inc(st, i)))
    pfline()
    em:line(string.format("%s += x[%s];", s, i))
    em:line(string.format("y[%s] = %s;", i, s))
    em:close()
    return
  end
  em:line("long " .. i .. ";")
  if not V then
    local k, r, t = "k", c.names.r, c.names.t
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", i, c.lo, i, U, c.hi, i, U))
    pfline()
    em:line(string.format("double %s[%d];", r, U))
    em:line(string.format("double %s = 0.0;", t))
    em:line(string.format("for (long %s = %s; %s < %s + %d; %s) { %s += x[%s]; %s[%s - %s] = %s; }",
                          k, i, k, i, U, inc(st, k), t, k, r, k, i, t))
    em:line(string.format("for (long %s = %s; %s < %s + %d; %s) y[%s] = %s + %s[%s - %s];",
                          k, i, k, i, U, inc(st, k), k, s, r, k, i))
    em:line(string.format("%s += %s;", s, t))
    em:close()
  else
    local W, buf = V.w, c.names.buf
    local zeros = {}
    for z = 1, 2 * W do zeros[z] = "0.0" end
    em:line(string.format("double %s[%d] = {%s};", buf, 2 * W, table.concat(zeros, ", ")))
    local vn = {}
    for u = 1, U do vn[u] = U == 1 and c.names.v or (c.names.v .. (u - 1)) end
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", i, c.lo, i, U * W, c.hi, i, U * W))
    pfline()
    for u = 1, U do em:line(V.ty .. " " .. vn[u] .. " = " .. V.ld("x + " .. ix(i, (u - 1) * W)) .. ";") end
    local sh = 1
    while sh < W do
      for u = 1, U do
        em:line(V.st(buf .. " + " .. W, vn[u]))
        em:line(vn[u] .. " = " .. V.add(vn[u], V.ld(buf .. " + " .. (W - sh))) .. ";")
      end
      sh = sh * 2
    end
    for u = 1, U do
      local carry = u == 1 and s or string.format("y[%s]", ix(i, (u - 1) * W - 1))
      em:line(vn[u] .. " = " .. V.add(vn[u], V.set1(carry)) .. ";")
      em:line(V.st("y + " .. ix(i, (u - 1) * W), vn[u]))
    end
    em:line(string.format("%s = y[%s];", s, ix(i, U * W - 1)))
    em:close()
  end
  em:line(string.format("for (; %s < %s; %s) { %s }", i, c.hi, inc(st, i), scalar_step(i)))
end

local function gen_prefix(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local U = parts.unroll(rng, set, V)
  local cb
  if set.cache_blocking then
    cb = {bs = parts.block_size(rng, {"BS", "BLOCK", "TILE"}, {64, 128, 256, 512})}
  end
  local ch
  if set.omp then
    ch = parts.block_size(rng, {"NCH", "CHUNKS", "NPART"}, {16, 32, 64})
  end
  local how = ch and ": chunks scanned in parallel, then shifted by their offsets" or ""
  parts.head(em, rng, set, {pf = pf, comment = st.comment and ("/* inclusive scan" .. how .. " */"),
                            signature = "void prefix_sum(int n, const double *x, double *y)"},
             cb and cb.bs, ch)
  local s = parts.name(rng, {"s", "run", "acc"})
  local names = {r = parts.name(rng, {"r", "loc", "part_"}), t = parts.name(rng, {"t", "bsum", "local"}),
                 buf = parts.name(rng, {"buf", "pad", "sh"}), v = parts.name(rng, {"v", "cur", "vx"})}
  local function body(lo, hi)
    if cb then
      parts.open_blocks(em, "ib", "iend", lo, hi, cb.bs.name)
      scan_seg(em, rng, {V = V, U = U, st = st, s = s, i = "i", lo = "ib", hi = "iend", pf = pf, names = names})
      em:close()
    else
      scan_seg(em, rng, {V = V, U = U, st = st, s = s, i = "i", lo = lo, hi = hi, pf = pf, names = names})
    end
  end
  if not ch then
    em:line(string.format("double %s = 0.0;", s))
    body("0", "n")
  else
    local part, c = parts.name(rng, {"part", "tot", "offs"}), parts.name(rng, {"c", "q", "ch"})
    local N = ch.name
    em:line(string.format("double %s[%s];", part, N))
    local function bounds()
      em:line(string.format("const long lo = (long)n * %s / %s, hi = (long)n * (%s + 1) / %s;", c, N, c, N))
    end
    em:pragma("#pragma omp parallel for" .. sched)
    em:open(string.format("for (int %s = 0; %s < %s; %s)", c, c, N, inc(st, c)))
    bounds()
    em:line(string.format("double %s = 0.0;", s))
    body("lo", "hi")
    em:line(string.format("%s[%s] = %s;", part, c, s))
    em:close()
    local run = parts.name(rng, {"base", "off", "carry"})
    em:line(string.format("double %s = 0.0;", run))
    em:line(string.format("for (int %s = 0; %s < %s; %s) { const double t_ = %s[%s]; %s[%s] = %s; %s += t_; }",
                          c, c, N, inc(st, c), part, c, part, c, run, run))
    em:pragma("#pragma omp parallel for" .. sched)
    em:open(string.format("for (int %s = 1; %s < %s; %s)", c, c, N, inc(st, c)))
    bounds()
    local o = parts.name(rng, {"o", "add", "shift"})
    em:line(string.format("const double %s = %s[%s];", o, part, c))
    if V then
      em:line("const " .. V.ty .. " v" .. o .. " = " .. V.set1(o) .. ";")
      em:line("long i;")
      em:open(string.format("for (i = lo; i + %d <= hi; i += %d)", V.w, V.w))
      em:line(V.st("y + i", V.add(V.ld("y + i"), "v" .. o)))
      em:close()
      em:line(string.format("for (; i < hi; %s) y[i] += %s;", inc(st, "i"), o))
    else
      em:line(string.format("for (long i = lo; i < hi; %s) y[i] += %s;", inc(st, "i"), o))
    end
    em:close()
  end
  em:close()
  return em:text()
end

-- col_sums: strips of columns (1, U, W or U*W wide) summed down the rows in registers;
-- cache blocking tiles the rows (each tile's strips add into s); OpenMP splits the strips.
local function gen_col_sums(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local U = parts.unroll(rng, set, V)
  local step = U * (V and V.w or 1)
  local cb
  if set.cache_blocking then
    cb = {bi = parts.block_size(rng, {"BI", "MB", "ROWS"}, {32, 64, 128, 256})}
  end
  parts.head(em, rng, set, {pf = pf, comment = st.comment and ("/* s[j] = sum over rows of A[i][j], " .. step .. " column(s) at a time */"),
                            signature = "void col_sums(int m, int n, const double *A, double *s)"},
             cb and cb.bi)
  local t = parts.name(rng, {"t", "sum", "c"})
  local acc = parts.name(rng, {"acc", "vs", "col"})
  local rlo, rhi = "0", "m"
  if cb then
    em:line(string.format("for (long j = 0; j < n; %s) s[j] = 0.0;", inc(st, "j")))
    parts.open_blocks(em, "ib", "iend", "0", "m", cb.bi.name)
    rlo, rhi = "ib", "iend"
  end
  local pfd = rng:pick({2, 4, 8})
  local function pfline(j)
    if pf then em:line(parts.pf_stmt(pf, string.format("A + (i + %d) * n + %s", pfd, j), false)) end
  end
  local function column(j, do_pf)  -- one column, scalar
    em:line(string.format("double %s = %s;", t, cb and ("s[" .. j .. "]") or "0.0"))
    em:open(string.format("for (long i = %s; i < %s; %s)", rlo, rhi, inc(st, "i")))
    if do_pf then pfline(j) end
    em:line(string.format("%s += A[i * n + %s];", t, j))
    em:close()
    em:line(string.format("s[%s] = %s;", j, t))
  end
  if step == 1 then
    if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
    em:open(string.format("for (long j = 0; j < n; %s)", inc(st, "j")))
    column("j", true)
    em:close()
  else
    em:line(string.format("const long nu = n - n %% %d;", step))
    if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
    em:open(string.format("for (long j = 0; j < nu; j += %d)", step))
    if not V then
      local names = {}
      for u = 0, U - 1 do names[u + 1] = t .. u end
      for u = 0, U - 1 do
        em:line(string.format("double %s = %s;", names[u + 1], cb and ("s[" .. ix("j", u) .. "]") or "0.0"))
      end
      em:open(string.format("for (long i = %s; i < %s; %s)", rlo, rhi, inc(st, "i")))
      pfline("j")
      for u = 0, U - 1 do em:line(string.format("%s += A[i * n + %s];", names[u + 1], ix("j", u))) end
      em:close()
      for u = 0, U - 1 do em:line(string.format("s[%s] = %s;", ix("j", u), names[u + 1])) end
    else
      local accs = {}
      for u = 1, U do accs[u] = U == 1 and acc or (acc .. (u - 1)) end
      for u = 1, U do
        local init = cb and V.ld("s + " .. ix("j", (u - 1) * V.w)) or V.zero()
        em:line(V.ty .. " " .. accs[u] .. " = " .. init .. ";")
      end
      em:open(string.format("for (long i = %s; i < %s; %s)", rlo, rhi, inc(st, "i")))
      pfline("j")
      if rng:chance(0.5) then
        em:line(string.format("const double *a = A + i * n + j;"))
        for u = 1, U do em:line(accs[u] .. " = " .. V.add(accs[u], V.ld(ix("a", (u - 1) * V.w))) .. ";") end
      else
        for u = 1, U do
          em:line(accs[u] .. " = " .. V.add(accs[u], V.ld("A + i * n + " .. ix("j", (u - 1) * V.w))) .. ";")
        end
      end
      em:close()
      for u = 1, U do em:line(V.st("s + " .. ix("j", (u - 1) * V.w), accs[u])) end
    end
    em:close()
    em:open(string.format("for (long j = nu; j < n; %s)", inc(st, "j")))
    column("j", false)
    em:close()
  end
  if cb then em:close() end
  em:close()
  return em:text()
end

return {gen_prefix = gen_prefix, gen_col_sums = gen_col_sums}
