-- sparse: spmv_csr.
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

local function gen_spmv(rng, set, isa)
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local rb = set.register_blocking
  local hsum, reduce = parts.sample_hsum(rng, V, isa)
  parts.head(em, rng, set, {pf = pf, V = V, hsum = hsum, reduce = reduce,
                            comment = st.comment and "/* y = A x, A in CSR form: one row's nonzeros at a time */",
                            signature = "void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, "
                                        .. "const double *val, const double *x, double *y)"})
  if rng:chance(0.5) then em:line("(void)cols;") end
  local pty = rng:pick({"int", "long"})
  local p = parts.name(rng, {"p", "k", "q"})
  local s = parts.name(rng, {"s", "sum", "t"})
  local beg, fin = parts.name(rng, {"beg", "start", "lo"}), parts.name(rng, {"end", "stop", "hi"})
  local ci = rng:chance(0.5) and "col_idx" or nil
  if set.omp then em:pragma("#pragma omp parallel for" .. (sched ~= "" and sched or rng:pick({"", " schedule(dynamic, 64)"}))) end
  em:open(string.format("for (%s i = 0; i < rows; %s)", st.ity, inc(st, "i")))
  em:line(string.format("const %s %s = row_ptr[i], %s = row_ptr[i + 1];", pty, beg, fin))
  local function xat(idx) return string.format("x[col_idx[%s]]", idx) end
  local function term(idx) return string.format("val[%s] * %s", idx, xat(idx)) end
  local function pfline(idx)
    if pf then
      local tgt = ci and rng:pick({"val", "col_idx"}) or "val"
      em:line(parts.pf_stmt(pf, tgt .. " + " .. idx .. " + " .. pf.dist, false))
    end
  end
  local U = rb and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4})) or 1
  if not V and U == 1 then
    em:line(string.format("double %s = 0.0;", s))
    em:open(string.format("for (%s %s = %s; %s < %s; %s)", pty, p, beg, p, fin, inc(st, p)))
    pfline(p)
    em:line(string.format("%s += %s;", s, term(p)))
    em:close()
    em:line(string.format("y[i] = %s;", s))
    em:close()
    em:close()
    return em:text()
  end
  em:line(pty .. " " .. p .. ";")
  if not V then
    local names, inits = {}, {}
    for u = 0, U - 1 do names[u + 1] = s .. u; inits[u + 1] = s .. u .. " = 0.0" end
    em:line("double " .. table.concat(inits, ", ") .. ";")
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", p, beg, p, U, fin, p, U))
    pfline(p)
    for u = 0, U - 1 do em:line(string.format("%s += %s;", names[u + 1], term(ix(p, u)))) end
    em:close()
    local terms = {}
    for u = 1, U, 2 do terms[#terms + 1] = "(" .. names[u] .. " + " .. names[u + 1] .. ")" end
    em:line(string.format("double %s = %s;", s, table.concat(terms, " + ")))
  else
    local accp = parts.name(rng, {"acc", "va", "vs"})
    local g = parts.name(rng, {"xg", "gx", "xs"})
    local rev = rng:chance(0.4)
    local step = U * V.w
    local accs = {}
    for u = 1, U do accs[u] = U == 1 and accp or (accp .. (u - 1)) end
    for _, a in ipairs(accs) do em:line(V.ty .. " " .. a .. " = " .. V.zero() .. ";") end
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", p, beg, p, step, fin, p, step))
    pfline(p)
    for u = 1, U do
      local base = (u - 1) * V.w
      local lanes = {}
      for k = 0, V.w - 1 do lanes[#lanes + 1] = xat(ix(p, base + k)) end
      local gather
      if rev then
        local r = {}
        for k = #lanes, 1, -1 do r[#r + 1] = lanes[k] end
        gather = V.isa == "avx512" and ("_mm512_set_pd(" .. table.concat(r, ", ") .. ")")
                 or ("_mm256_set_pd(" .. table.concat(r, ", ") .. ")")
      else
        gather = (V.isa == "avx512" and "_mm512_setr_pd(" or "_mm256_setr_pd(") .. table.concat(lanes, ", ") .. ")"
      end
      local gn = U == 1 and g or (g .. (u - 1))
      em:line("const " .. V.ty .. " " .. gn .. " = " .. gather .. ";")
      em:line(accs[u] .. " = " .. V.fma(V.ld("val + " .. ix(p, base)), gn, accs[u]) .. ";")
    end
    em:close()
    local whole = parts.tree(accs, V.add)
    local h = reduce and ("_mm512_reduce_add_pd(" .. whole .. ")") or (hsum .. "(" .. whole .. ")")
    em:line(string.format("double %s = %s;", s, h))
  end
  em:line(string.format("for (; %s < %s; %s) %s += %s;", p, fin, inc(st, p), s, term(p)))
  em:line(string.format("y[i] = %s;", s))
  em:close()
  em:close()
  return em:text()
end

return {gen_spmv = gen_spmv}
