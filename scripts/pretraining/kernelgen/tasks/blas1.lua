-- blas1: axpy, and the reductions dot, nrm2, asum.
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

local reductions = {
  dot = {proto = "double dot(int n, const double *x, const double *y)",
         term = function(i) return "x[" .. i .. "] * y[" .. i .. "]" end, mul = true,
         vterm = function(V, i, acc) return acc .. " = " .. V.fma(V.ld("x + " .. i), V.ld("y + " .. i), acc) .. ";" end,
         arrays = {"x", "y"}},
  nrm2 = {proto = "double nrm2(int n, const double *x)", math = true, sqrt = true,
          term = function(i) return "x[" .. i .. "] * x[" .. i .. "]" end, mul = true,
          vterm = function(V, i, acc, tmp)
            return V.ty .. " " .. tmp .. " = " .. V.ld("x + " .. i) .. ";", acc .. " = " .. V.fma(tmp, tmp, acc) .. ";"
          end,
          arrays = {"x"}},
  asum = {proto = "double asum(int n, const double *x)", math = true,
          term = function(i) return "fabs(x[" .. i .. "])" end, mul = false,
          vterm = function(V, i, acc, tmp)
            if V.isa == "avx512" then return acc .. " = " .. V.add(acc, "_mm512_abs_pd(" .. V.ld("x + " .. i) .. ")") .. ";" end
            -- |v| = max(v, 0 - v): the front end's AVX2 set has no andnot
            return V.ty .. " " .. tmp .. " = " .. V.ld("x + " .. i) .. ";",
                   acc .. " = " .. V.add(acc, "_mm256_max_pd(" .. tmp .. ", _mm256_sub_pd(zero, " .. tmp .. "))") .. ";"
          end,
          arrays = {"x"}},
}

-- A reduction kernel (dot, nrm2, asum).
local function gen_reduction(rng, name, set, isa)
  local R = reductions[name]
  local st = parts.sample_style(rng)
  local em = parts.emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  local pf = set.prefetch and parts.sample_pf(rng) or nil
  local ity = st.ity
  local i = parts.name(rng, {"i", "i", "k", "idx"})
  local s = parts.name(rng, {"s", "sum", "total", "result"})
  local sched = set.omp and parts.sample_sched(rng) or ""
  local V = set.simd and parts.vops(isa) or nil
  local hsum, use_reduce = parts.sample_hsum(rng, V, isa, {"hsum", "hadd", "reduce_vec", "sum_lanes"})
  parts.includes(em, set, pf, R.math, rng)
  if V and not use_reduce then parts.emit_hsum(em, V, hsum) end
  if st.comment then
    em:line("/* " .. name .. ": " .. (set.simd and "vector" or "scalar") .. " partial sums"
            .. (set.omp and ", split over threads" or "") .. " */")
  end
  em:open(R.proto)
  local function pfline(idx)
    if pf then em:line(parts.pf_stmt(pf, R.arrays[rng:int(1, #R.arrays)] .. " + " .. idx .. " + " .. pf.dist, false)) end
  end
  local ret = R.sqrt and ("sqrt(" .. s .. ")") or s
  local z = rng:pick({"0.0", "0.0", "0"})
  if not V then
    if not set.register_blocking then
      em:line("double " .. s .. " = " .. z .. ";")
      if set.omp then em:pragma("#pragma omp parallel for reduction(+:" .. s .. ")" .. sched) end
      em:open(string.format("for (%s %s = 0; %s < n; %s)", ity, i, i, inc(st, i)))
      pfline(i)
      em:line(s .. " += " .. R.term(i) .. ";")
      em:close()
      em:line("return " .. ret .. ";")
    else
      local U = rng:pick({2, 4, 4, 8})
      local form = (R.mul and rng:chance(0.6)) and "sums" or "array"
      local nu = parts.name(rng, {"nu", "main", "n_even", "limit"})
      em:line(string.format("const %s %s = n - n %% %d;", ity, nu, U))
      if form == "sums" then
        local names, inits = {}, {}
        local pre = parts.name(rng, {"s", "acc", "p"})
        if pre == s then pre = "a" end
        for u = 0, U - 1 do names[u + 1] = pre .. u; inits[u + 1] = pre .. u .. " = " .. z end
        em:line("double " .. table.concat(inits, ", ") .. ";")
        if set.omp then em:pragma("#pragma omp parallel for reduction(+:" .. table.concat(names, ", ") .. ")" .. sched) end
        em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, U))
        pfline(i)
        for u = 0, U - 1 do em:line(names[u + 1] .. " += " .. R.term(ix(i, u)) .. ";") end
        em:close()
        local terms = {}
        for u = 1, U, 2 do terms[#terms + 1] = "(" .. names[u] .. " + " .. names[u + 1] .. ")" end
        em:line("double " .. s .. " = " .. table.concat(terms, " + ") .. ";")
      else
        local acc = parts.name(rng, {"acc", "part", "lane"})
        local j = i == "i" and "j" or (i .. "2")
        local zeros = {}
        for u = 1, U do zeros[u] = "0" end
        local sums = {}
        for u = 0, U - 1, 2 do sums[#sums + 1] = "(" .. acc .. "[" .. u .. "] + " .. acc .. "[" .. (u + 1) .. "])" end
        if set.omp then
          em:line("double " .. s .. " = " .. z .. ";")
          em:pragma("#pragma omp parallel reduction(+:" .. s .. ")")
          em:line("{")
          em.depth = em.depth + 1
          em:line("double " .. acc .. "[" .. U .. "] = {" .. table.concat(zeros, ", ") .. "};")
          em:pragma("#pragma omp for" .. sched)
        else
          em:line("double " .. acc .. "[" .. U .. "] = {" .. table.concat(zeros, ", ") .. "};")
        end
        em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, U))
        pfline(i)
        em:line(string.format("for (%s %s = %s; %s < %s + %d; %s) %s[%s - %s] += %s;", ity, j, i, j, i, U,
                              inc(st, j), acc, j, i, R.term(j)))
        em:close()
        if set.omp then
          em:line(s .. " += " .. table.concat(sums, " + ") .. ";")
          em:close()
        else
          em:line("double " .. s .. " = " .. table.concat(sums, " + ") .. ";")
        end
      end
      em:line(string.format("for (%s %s = %s; %s < n; %s) %s += %s;", ity, i, nu, i, inc(st, i), s, R.term(i)))
      em:line("return " .. ret .. ";")
    end
    em:close()
    return em:text()
  end
  -- SIMD
  local U = set.register_blocking and rng:pick({2, 4, 4}) or 1
  local step = U * V.w
  local accp = parts.name(rng, {"acc", "vs", "vsum", "sv"})
  local nv = parts.name(rng, {"nv", "nvec", "vend", "main"})
  local tmp = parts.name(rng, {"xv", "a", "vx"})
  em:line("double " .. s .. " = " .. z .. ";")
  em:line(string.format("const %s %s = n - n %% %d;", ity, nv, step))
  if name == "asum" and isa == "avx2" then em:line("const __m256d zero = _mm256_setzero_pd();") end
  if set.omp then
    em:pragma("#pragma omp parallel reduction(+:" .. s .. ")")
    em:line("{")
    em.depth = em.depth + 1
  end
  local accs = {}
  for u = 1, U do accs[u] = U == 1 and accp or (accp .. (u - 1)) end
  for _, a in ipairs(accs) do em:line(V.ty .. " " .. a .. " = " .. V.zero() .. ";") end
  if set.omp then em:pragma("#pragma omp for" .. sched) end
  em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nv, i, step))
  pfline(i)
  for u = 1, U do
    local lines = {R.vterm(V, ix(i, (u - 1) * V.w), accs[u], U == 1 and tmp or (tmp .. (u - 1)))}
    for _, l in ipairs(lines) do em:line(l) end
  end
  em:close()
  local whole
  if U == 1 then whole = accs[1]
  else
    local tot = parts.name(rng, {"tot", "all", "vt"})
    local e = V.add(accs[1], accs[2])
    if U == 4 then e = V.add(e, V.add(accs[3], accs[4])) end
    em:line(V.ty .. " " .. tot .. " = " .. e .. ";")
    whole = tot
  end
  local h = use_reduce and ("_mm512_reduce_add_pd(" .. whole .. ")") or (hsum .. "(" .. whole .. ")")
  em:line(s .. " += " .. h .. ";")
  if set.omp then em:close() end
  if rng:chance(0.5) then
    em:line(string.format("for (%s %s = %s; %s < n; %s) %s += %s;", ity, i, nv, i, inc(st, i), s, R.term(i)))
  else
    em:open(string.format("for (%s %s = %s; %s < n; %s)", ity, i, nv, i, inc(st, i)))
    em:line(s .. " += " .. R.term(i) .. ";")
    em:close()
  end
  em:line("return " .. ret .. ";")
  em:close()
  return em:text()
end

local function gen_axpy(rng, set, isa)
  local st = parts.sample_style(rng)
  local em = parts.emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  local pf = set.prefetch and parts.sample_pf(rng) or nil
  local ity, i = st.ity, parts.name(rng, {"i", "i", "k", "idx"})
  local sched = set.omp and parts.sample_sched(rng) or ""
  local V = set.simd and parts.vops(isa) or nil
  parts.includes(em, set, pf, false, rng)
  if st.comment then em:line("/* y += alpha * x" .. (set.omp and ", rows of the vector split over threads" or "") .. " */") end
  em:open("void axpy(int n, double alpha, const double *x, double *y)")
  local function pfline(idx)
    if pf then
      local tgt = rng:pick({"x", "y"})
      em:line(parts.pf_stmt(pf, tgt .. " + " .. idx .. " + " .. pf.dist, tgt == "y"))
    end
  end
  local omp = set.omp and ("#pragma omp parallel for" .. sched) or nil
  local function scalar_update(idx, plus)
    if plus then return "y[" .. idx .. "] += alpha * x[" .. idx .. "];" end
    return "y[" .. idx .. "] = y[" .. idx .. "] + alpha * x[" .. idx .. "];"
  end
  local U = set.register_blocking and (V and rng:pick({2, 4, 4}) or rng:pick({2, 4, 4, 8})) or 1
  local step = U * (V and V.w or 1)
  if U == 1 and not V then
    if omp then em:pragma(omp) end
    em:open(string.format("for (%s %s = 0; %s < n; %s)", ity, i, i, inc(st, i)))
    pfline(i)
    em:line(scalar_update(i, rng:chance(0.6)))
    em:close()
    em:close()
    return em:text()
  end
  local nu = parts.name(rng, {"nu", "nmain", "bulk", "lim"})
  em:line(string.format("const %s %s = n - n %% %d;", ity, nu, step))
  if V then
    local va = parts.name(rng, {"va", "valpha", "a"})
    em:line("const " .. V.ty .. " " .. va .. " = " .. V.set1("alpha") .. ";")
    if omp then em:pragma(omp) end
    em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, step))
    pfline(i)
    if U == 1 then
      if rng:chance(0.5) then
        em:line(V.st("y + " .. i, V.fma(va, V.ld("x + " .. i), V.ld("y + " .. i))))
      else
        local r = parts.name(rng, {"r", "out", "res"})
        em:line(V.ty .. " " .. r .. " = " .. V.fma(va, V.ld("x + " .. i), V.ld("y + " .. i)) .. ";")
        em:line(V.st("y + " .. i, r))
      end
    else
      local pre = parts.name(rng, {"y", "vy", "r"})
      for u = 0, U - 1 do em:line(V.ty .. " " .. pre .. u .. " = " .. V.ld("y + " .. ix(i, u * V.w)) .. ";") end
      for u = 0, U - 1 do em:line(pre .. u .. " = " .. V.fma(va, V.ld("x + " .. ix(i, u * V.w)), pre .. u) .. ";") end
      for u = 0, U - 1 do em:line(V.st("y + " .. ix(i, u * V.w), pre .. u)) end
    end
    em:close()
  else
    if omp then em:pragma(omp) end
    em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, step))
    pfline(i)
    for u = 0, U - 1 do em:line(scalar_update(ix(i, u), true)) end
    em:close()
  end
  em:line(string.format("for (%s %s = %s; %s < n; %s) %s", ity, i, nu, i, inc(st, i), scalar_update(i, true)))
  em:close()
  return em:text()
end

return {reductions = reductions, gen_reduction = gen_reduction, gen_axpy = gen_axpy}
