-- transpose: an exact copy, B[j*m + i] = A[i*n + j].
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

local function gen_transpose(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local cb
  if set.cache_blocking then
    local form = parts.sample_cb_form(rng)
    cb = {bi = parts.block_size(rng, {"BI", "TI", "BR"}, {16, 32, 64}, form),
          bj = parts.block_size(rng, {"BJ", "TJ", "BC"}, {16, 32, 64}, form)}
  end
  parts.head(em, rng, set, {pf = pf, comment = st.comment and ("/* B = A^T" .. (cb and ", tile by tile" or "") .. " */"),
                            signature = "void transpose(int m, int n, const double *A, double *B)"},
             cb and cb.bi, cb and cb.bj)
  local copy = function(i, j) return string.format("B[%s * m + %s] = A[%s * n + %s];", j, i, i, j) end
  local ilo, ihi, jlo, jhi = "0", "m", "0", "n"
  local closes = 0
  if cb then
    if set.omp then em:pragma("#pragma omp parallel for" .. (rng:chance(0.5) and " collapse(2)" or "") .. sched) end
    em:open(string.format("for (long ib = 0; ib < m; ib += %s)", cb.bi.name))
    em:open(string.format("for (long jb = 0; jb < n; jb += %s)", cb.bj.name))
    em:line(string.format("const long iend = ib + %s < m ? ib + %s : m;", cb.bi.name, cb.bi.name))
    em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", cb.bj.name, cb.bj.name))
    ilo, ihi, jlo, jhi = "ib", "iend", "jb", "jend"
    closes = 2
  end
  local omp_here = set.omp and not cb
  local pfd = rng:pick({1, 2, 4})
  if not V then
    local rows_first = rng:chance(0.6)
    if omp_here then em:pragma("#pragma omp parallel for" .. (rng:chance(0.4) and " collapse(2)" or "") .. sched) end
    if rows_first then
      em:open(string.format("for (long i = %s; i < %s; %s)", ilo, ihi, inc(st, "i")))
      em:open(string.format("for (long j = %s; j < %s; %s)", jlo, jhi, inc(st, "j")))
      if pf then em:line(parts.pf_stmt(pf, "B + (j + " .. pfd .. ") * m + i", true)) end
    else
      em:open(string.format("for (long j = %s; j < %s; %s)", jlo, jhi, inc(st, "j")))
      em:open(string.format("for (long i = %s; i < %s; %s)", ilo, ihi, inc(st, "i")))
      if pf then em:line(parts.pf_stmt(pf, "A + (i + " .. pfd .. ") * n + j", false)) end
    end
    em:line(copy("i", "j"))
    em:close()
    em:close()
  elseif V.isa == "avx2" and rng:chance(0.5) then
    -- 4 x 4 blocks: four rows of A in registers, unpacked into pairs, stored as 128-bit halves
    em:line(string.format("const long iq = %s - (%s - %s) %% 4;", ihi, ihi, ilo))
    if omp_here then em:pragma("#pragma omp parallel for" .. sched) end
    em:open(string.format("for (long i = %s; i < iq; i += 4)", ilo))
    em:line("long j;")
    em:open(string.format("for (j = %s; j + 4 <= %s; j += 4)", jlo, jhi))
    if pf then em:line(parts.pf_stmt(pf, "A + (i + " .. (4 * pfd) .. ") * n + j", false)) end
    local r, t = parts.name(rng, {"r", "row", "a"}), parts.name(rng, {"t", "u", "p"})
    local function par(e) return e:find(" ", 1, true) and ("(" .. e .. ")") or e end
    for k = 0, 3 do
      em:line(string.format("const __m256d %s%d = _mm256_loadu_pd(A + %s * n + j);", r, k, par(ix("i", k))))
    end
    em:line(string.format("const __m256d %s0 = _mm256_unpacklo_pd(%s0, %s1);", t, r, r))
    em:line(string.format("const __m256d %s1 = _mm256_unpackhi_pd(%s0, %s1);", t, r, r))
    em:line(string.format("const __m256d %s2 = _mm256_unpacklo_pd(%s2, %s3);", t, r, r))
    em:line(string.format("const __m256d %s3 = _mm256_unpackhi_pd(%s2, %s3);", t, r, r))
    for k = 0, 3 do
      local lo_, hi_ = k % 2, k % 2 + 2
      local half = function(v) return k < 2 and ("_mm256_castpd256_pd128(" .. v .. ")") or ("_mm256_extractf128_pd(" .. v .. ", 1)") end
      em:line(string.format("_mm_storeu_pd(B + %s * m + i, %s);", par(ix("j", k)), half(t .. lo_)))
      em:line(string.format("_mm_storeu_pd(B + %s * m + i + 2, %s);", par(ix("j", k)), half(t .. hi_)))
    end
    em:close()
    em:open(string.format("for (; j < %s; %s)", jhi, inc(st, "j")))
    for k = 0, 3 do em:line(string.format("B[j * m + %s] = A[%s * n + j];", ix("i", k), par(ix("i", k)))) end
    em:close()
    em:close()
    em:open(string.format("for (long i = iq; i < %s; %s)", ihi, inc(st, "i")))
    em:line(string.format("for (long j = %s; j < %s; %s) %s", jlo, jhi, inc(st, "j"), copy("i", "j")))
    em:close()
  else
    -- B's row j over W consecutive i: a vector gathered down a column of A
    if omp_here then em:pragma("#pragma omp parallel for" .. sched) end
    em:open(string.format("for (long j = %s; j < %s; %s)", jlo, jhi, inc(st, "j")))
    em:line("long i;")
    em:open(string.format("for (i = %s; i + %d <= %s; i += %d)", ilo, V.w, ihi, V.w))
    if pf then em:line(parts.pf_stmt(pf, "A + (i + " .. (V.w * pfd) .. ") * n + j", false)) end
    local lanes = {}
    local viaptr = rng:chance(0.5)
    if viaptr then em:line("const double *a = A + i * n + j;") end
    for k = 0, V.w - 1 do
      if viaptr then lanes[#lanes + 1] = k == 0 and "a[0]" or (k == 1 and "a[n]" or string.format("a[%d * n]", k))
      else lanes[#lanes + 1] = string.format("A[(%s) * n + j]", ix("i", k)) end
    end
    local g = (V.isa == "avx512" and "_mm512_setr_pd(" or "_mm256_setr_pd(") .. table.concat(lanes, ", ") .. ")"
    if rng:chance(0.5) then
      em:line(V.st("B + j * m + i", g))
    else
      local c = parts.name(rng, {"col", "g", "cv"})
      em:line("const " .. V.ty .. " " .. c .. " = " .. g .. ";")
      em:line(V.st("B + j * m + i", c))
    end
    em:close()
    em:line(string.format("for (; i < %s; %s) %s", ihi, inc(st, "i"), copy("i", "j")))
    em:close()
  end
  for _ = 1, closes do em:close() end
  em:close()
  return em:text()
end

return {gen_transpose = gen_transpose}
