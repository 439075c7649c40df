-- Synthetic kernels for the task suite's training tasks (stdlib/tasks), beside kernelgen's
-- matmul ones: correct C kernels in each task's prototype composing the techniques its
-- spec lists, labelled with exactly the set stages.detect() finds, and chat examples.
--
--   local kt = require "kernelgen.tasks"
--   kt.tasks                                   -- the task names covered
--   local k = kt.kernel(rng, "axpy", {allowed = {...}, require = {...}, isa = "avx2"})
--   k.code, k.techniques (Table I order), k.task, k.isa
--   local ex = kt.example(rng, {task = "dot", kind = "fixed" | "write", stage = s, isa = ...})
--   ex.messages, ex.completion, ex.kind, ex.stage, ex.techniques, ex.task, ex.isa, ex.kernel
--   local list = kt.corpus(n, {seed = 1, isa = "avx2" | {avx512 = .5, avx2 = .5},
--                              mix = {fixed = .45, write = .55}, tasks = {...}})
--
-- rng is kernelgen.rng(seed). Families: blas1 (axpy, dot, nrm2, asum), stencil
-- (jacobi2d_5, jacobi2d_9, jacobi3d_7) and blas2's gemv_n, gemv_t and ger. What varies:
-- loop index types and names, the remainder loop's form, unroll factors (2/4/8 scalar
-- sums or 2/4 vectors), accumulator names, a tiled accumulator array or separate sums,
-- AVX-512 or AVX2/FMA intrinsics and how a vector is summed, OpenMP (parallel for with a reduction, or a parallel region with
-- a worksharing loop; schedules and chunks; collapse(2) over perfect nests), prefetch
-- (_mm_prefetch or __builtin_prefetch, distances, hints), cache blocks (rows and/or
-- columns, 16..256, #define / const int / literal), indentation and comments.
--
-- Rules the text keeps so that stages.detect() agrees with the label (see its patterns):
-- a kernel without register blocking has at most one vector accumulator (x = _mm*_add_pd
-- (.., x) / fmadd) and at most one scalar `lhs += a * b`; loops start at a strided loop's
-- variable only where a block is meant (remainders are `for (; i < n; ...)` or start at a
-- bound that is no loop's variable); vector arithmetic that is not an accumulation is
-- stored directly or bound to a fresh name.

local stages = require "stages"
local prompts = require "prompts"
local etasks = require "engine.tasks"

local M = {}

M.tasks = {"axpy", "dot", "nrm2", "asum", "jacobi2d_5", "jacobi2d_9", "jacobi3d_7", "gemv_n", "gemv_t", "ger"}
M.isas = {"avx512", "avx2"}

local TECH = stages.techniques

local function set_of(list)
  local s = {}
  for _, x in ipairs(list or {}) do s[x] = true end
  return s
end

local VEC = {
  avx512 = {w = 8, ty = "__m512d", p = "_mm512"},
  avx2 = {w = 4, ty = "__m256d", p = "_mm256"},
}

---------------------------------------------------------------------------------------
-- Text helpers
---------------------------------------------------------------------------------------

-- A line emitter: em:line(text), em:open(text) (a line ending in "{" and one level in),
-- em:close(suffix).
local Em = {}
Em.__index = Em
local function emitter(unit)
  return setmetatable({out = {}, depth = 0, unit = string.rep(" ", unit)}, Em)
end
function Em:line(text)
  if text == "" then self.out[#self.out + 1] = ""
  else self.out[#self.out + 1] = string.rep(self.unit, self.depth) .. text end
end
function Em:open(text) self:line(text .. " {"); self.depth = self.depth + 1 end
function Em:close(suffix) self.depth = self.depth - 1; self:line("}" .. (suffix or "")) end
function Em:pragma(text) self.out[#self.out + 1] = (self.pragma_indent and string.rep(self.unit, self.depth) or "") .. text end
function Em:text() return table.concat(self.out, "\n") .. "\n" end

-- The vector operations of an ISA, as text.
local function vops(isa)
  local v = VEC[isa]
  local p = v.p
  return {
    w = v.w, ty = v.ty, isa = isa,
    ld = function(e) return p .. "_loadu_pd(" .. e .. ")" end,
    st = function(ptr, e) return p .. "_storeu_pd(" .. ptr .. ", " .. e .. ");" end,
    set1 = function(e) return p .. "_set1_pd(" .. e .. ")" end,
    zero = function() return p .. "_setzero_pd()" end,
    fma = function(a, b, c) return p .. "_fmadd_pd(" .. a .. ", " .. b .. ", " .. c .. ")" end,
    add = function(a, b) return p .. "_add_pd(" .. a .. ", " .. b .. ")" end,
    mul = function(a, b) return p .. "_mul_pd(" .. a .. ", " .. b .. ")" end,
  }
end

-- A style: indentation, the loop index type, the increment, comments.
local function sample_style(rng)
  return {
    indent = rng:pick({2, 4, 4}),
    ity = rng:pick({"long", "long", "int"}),
    inc = rng:pick({"++%s", "++%s", "%s++"}),
    comment = rng:chance(0.4),
    pragma_indent = rng:chance(0.5),
  }
end

local function inc(st, v) return st.inc:format(v) end

-- OpenMP schedule clause (may be empty).
local function sample_sched(rng)
  local kind = rng:weighted({none = 4, static = 3, dynamic = 2, guided = 1})
  if kind == "none" then return "" end
  if kind ~= "guided" and rng:chance(0.5) then
    return string.format(" schedule(%s, %d)", kind, rng:pick({4, 8, 16, 64}))
  end
  return " schedule(" .. kind .. ")"
end

-- A prefetch of the address `addr` (an expression of a pointer), for reading or writing.
local function sample_pf(rng)
  return {fn = rng:pick({"mm", "mm", "builtin"}), hint = rng:pick({"T0", "T0", "T1"}),
          dist = rng:pick({32, 64, 64, 128, 256})}
end
local function pf_stmt(pf, addr, write)
  if pf.fn == "mm" then
    return string.format("_mm_prefetch((const char *)(%s), _MM_HINT_%s);", addr, pf.hint)
  end
  return string.format("__builtin_prefetch(%s, %d, %d);", addr, write and 1 or 0, pf.hint == "T0" and 3 or 2)
end

-- Includes the code needs.
local function includes(em, set, pf, math_h, rng)
  if set.simd or (pf and pf.fn == "mm") then em:line("#include <immintrin.h>") end
  if set.omp and rng:chance(0.5) then em:line("#include <omp.h>") end
  if math_h then em:line("#include <math.h>") end
  if #em.out > 0 then em:line("") end
end

-- A block size in one of three forms: {decl = line or nil, name = text}.
local function block_size(rng, name, size, form)
  if form == "define" then return {top = "#define " .. name .. " " .. size, name = name} end
  if form == "const" then return {decl = "const int " .. name .. " = " .. size .. ";", name = name} end
  return {name = tostring(size)}
end

---------------------------------------------------------------------------------------
-- blas1: axpy, and the reductions dot, nrm2, asum
---------------------------------------------------------------------------------------

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

local function ix(i, k) return k == 0 and i or (i .. " + " .. k) end

-- A reduction kernel (dot, nrm2, asum).
local function gen_reduction(rng, name, set, isa)
  local R = reductions[name]
  local st = sample_style(rng)
  local em = emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  local pf = set.prefetch and sample_pf(rng) or nil
  local ity = st.ity
  local i = rng:pick({"i", "i", "k", "idx"})
  local s = rng:pick({"s", "sum", "total", "result"})
  local sched = set.omp and sample_sched(rng) or ""
  local V = set.simd and vops(isa) or nil
  local hsum = rng:pick({"hsum", "hadd", "reduce_vec", "sum_lanes"})
  local use_reduce = V and isa == "avx512" and rng:chance(0.5)
  includes(em, set, pf, R.math, rng)
  if V and not use_reduce then
    em:open("static inline double " .. hsum .. "(" .. V.ty .. " v)")
    em:line("double t[" .. V.w .. "];")
    em:line(V.st("t", "v"))
    local parts = {}
    for k = 0, V.w - 1, 2 do parts[#parts + 1] = "(t[" .. k .. "] + t[" .. (k + 1) .. "])" end
    em:line("return " .. table.concat(parts, " + ") .. ";")
    em:close()
    em:line("")
  end
  if st.comment then
    em:line("/* " .. name .. ": " .. (set.simd and "vector" or "scalar") .. " partial sums"
            .. (set.omp and ", split over threads" or "") .. " */")
  end
  em:open(R.proto)
  local function pfline(idx)
    if pf then em:line(pf_stmt(pf, R.arrays[rng:int(1, #R.arrays)] .. " + " .. idx .. " + " .. pf.dist, false)) end
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
      local nu = rng:pick({"nu", "main", "n_even", "limit"})
      em:line(string.format("const %s %s = n - n %% %d;", ity, nu, U))
      if form == "sums" then
        local names, inits = {}, {}
        local pre = rng:pick({"s", "acc", "p"})
        if pre == s then pre = "a" end
        for u = 0, U - 1 do names[u + 1] = pre .. u; inits[u + 1] = pre .. u .. " = " .. z end
        em:line("double " .. table.concat(inits, ", ") .. ";")
        if set.omp then em:pragma("#pragma omp parallel for reduction(+:" .. table.concat(names, ", ") .. ")" .. sched) end
        em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, U))
        pfline(i)
        for u = 0, U - 1 do em:line(names[u + 1] .. " += " .. R.term(ix(i, u)) .. ";") end
        em:close()
        local parts = {}
        for u = 1, U, 2 do parts[#parts + 1] = "(" .. names[u] .. " + " .. names[u + 1] .. ")" end
        em:line("double " .. s .. " = " .. table.concat(parts, " + ") .. ";")
      else
        local acc = rng:pick({"acc", "part", "lane"})
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
  local accp = rng:pick({"acc", "vs", "vsum", "sv"})
  local nv = rng:pick({"nv", "nvec", "vend", "main"})
  local tmp = rng:pick({"xv", "a", "vx"})
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
    local tot = rng:pick({"tot", "all", "vt"})
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
  local st = sample_style(rng)
  local em = emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  local pf = set.prefetch and sample_pf(rng) or nil
  local ity, i = st.ity, rng:pick({"i", "i", "k", "idx"})
  local sched = set.omp and sample_sched(rng) or ""
  local V = set.simd and vops(isa) or nil
  includes(em, set, pf, false, rng)
  if st.comment then em:line("/* y += alpha * x" .. (set.omp and ", rows of the vector split over threads" or "") .. " */") end
  em:open("void axpy(int n, double alpha, const double *x, double *y)")
  local function pfline(idx)
    if pf then
      local tgt = rng:pick({"x", "y"})
      em:line(pf_stmt(pf, tgt .. " + " .. idx .. " + " .. pf.dist, tgt == "y"))
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
  local nu = rng:pick({"nu", "nmain", "bulk", "lim"})
  em:line(string.format("const %s %s = n - n %% %d;", ity, nu, step))
  if V then
    local va = rng:pick({"va", "valpha", "a"})
    em:line("const " .. V.ty .. " " .. va .. " = " .. V.set1("alpha") .. ";")
    if omp then em:pragma(omp) end
    em:open(string.format("for (%s %s = 0; %s < %s; %s += %d)", ity, i, i, nu, i, step))
    pfline(i)
    if U == 1 then
      if rng:chance(0.5) then
        em:line(V.st("y + " .. i, V.fma(va, V.ld("x + " .. i), V.ld("y + " .. i))))
      else
        local r = rng:pick({"r", "out", "res"})
        em:line(V.ty .. " " .. r .. " = " .. V.fma(va, V.ld("x + " .. i), V.ld("y + " .. i)) .. ";")
        em:line(V.st("y + " .. i, r))
      end
    else
      local pre = rng:pick({"y", "vy", "r"})
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

---------------------------------------------------------------------------------------
-- stencils: jacobi2d_5, jacobi2d_9, jacobi3d_7
---------------------------------------------------------------------------------------

-- Each stencil: its prototype, dims (2 or 3), and the weighted groups of neighbour offsets
-- from the centre pointer ("s": the row stride, "p": the plane stride).
local stencils = {
  jacobi2d_5 = {proto = "void jacobi2d_5(int n, const double *u, double *v)", dims = 2,
                groups = {{"0.25", {"-s", "s", "-1", "1"}}}},
  jacobi2d_9 = {proto = "void jacobi2d_9(int n, const double *u, double *v)", dims = 2,
                groups = {{"0.25", {"0"}}, {"0.125", {"-s", "s", "-1", "1"}},
                          {"0.0625", {"-s - 1", "-s + 1", "s - 1", "s + 1"}}}},
  jacobi3d_7 = {proto = "void jacobi3d_7(int n, const double *u, double *v)", dims = 3,
                groups = {{"0.25", {"0"}}, {"0.125", {"-p", "p", "-s", "s", "-1", "1"}}}},
}

-- A sum of terms as a balanced tree of f(a, b) or a + b.
local function tree(terms, f)
  if #terms == 1 then return terms[1] end
  local mid = #terms // 2
  local a = tree({table.unpack(terms, 1, mid)}, f)
  local b = tree({table.unpack(terms, mid + 1)}, f)
  return f(a, b)
end

local function gen_stencil(rng, name, set, isa)
  local S = stencils[name]
  local st = sample_style(rng)
  local em = emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  local pf = set.prefetch and sample_pf(rng) or nil
  local V = set.simd and vops(isa) or nil
  local sched = set.omp and sample_sched(rng) or ""
  local rb = set.register_blocking
  -- names: the strides s, p are fixed by the groups; c the centre pointer, o the output row
  local c, o = rng:pick({"c", "ctr", "src"}), rng:pick({"o", "dst", "out"})
  local i, j, k = "i", "j", "k"
  local inner = S.dims == 2 and j or k
  -- groups for register blocking: at least two, so that each output is accumulated
  local groups = S.groups
  if rb and #groups == 1 then
    local g = groups[1]
    groups = {{g[1], {g[2][1], g[2][2]}}, {g[1], {g[2][3], g[2][4]}}}
  end
  local function at(idx, off)
    if off == "0" then return idx end
    if off:sub(1, 1) == "-" then return idx .. " - " .. off:sub(2) end
    return idx .. " + " .. off
  end
  local function sexpr(idx)
    local parts = {}
    for _, g in ipairs(S.groups) do
      local ts = {}
      for q, off in ipairs(g[2]) do ts[q] = c .. "[" .. at(idx, off) .. "]" end
      parts[#parts + 1] = g[1] .. " * " .. (#ts == 1 and ts[1] or ("(" .. table.concat(ts, " + ") .. ")"))
    end
    return table.concat(parts, " + ")
  end
  local wname = {["0.25"] = "w4", ["0.125"] = "w8", ["0.0625"] = "w16"}
  local function vsum(idx, g)
    local ts = {}
    for q, off in ipairs(g[2]) do ts[q] = V.ld(c .. " + " .. at(idx, off)) end
    return tree(ts, V.add)
  end
  local function vexpr(idx)
    local parts = {}
    for _, g in ipairs(S.groups) do parts[#parts + 1] = V.mul(wname[g[1]], vsum(idx, g)) end
    return tree(parts, V.add)
  end
  includes(em, set, pf, false, rng)
  -- cache blocking: which loops are tiled
  local cb
  if set.cache_blocking then
    cb = {rows = rng:chance(0.7), form = rng:pick({"define", "define", "const", "literal"})}
    cb.cols = not cb.rows or rng:chance(0.5)
    cb.br = block_size(rng, rng:pick({"BR", "BI", "TILE_R"}), rng:pick({16, 32, 32, 64}), cb.form)
    cb.bc = block_size(rng, rng:pick({"BC", "BJ", "TILE_C"}), rng:pick({64, 128, 128, 256}), cb.form)
    if cb.rows and cb.br.top then em:line(cb.br.top) end
    if cb.cols and cb.bc.top then em:line(cb.bc.top) end
    if (cb.rows and cb.br.top) or (cb.cols and cb.bc.top) then em:line("") end
  end
  if st.comment then
    em:line("/* one sweep of the " .. (S.dims == 3 and "7-point 3-D" or (name:find("_9") and "9-point" or "5-point"))
            .. " stencil" .. (cb and ", in tiles" or "") .. " */")
  end
  em:open(S.proto)
  em:line("const long s = (long)n + 2;")
  if S.dims == 3 then em:line("const long p = s * s;") end
  if V then
    for _, g in ipairs(S.groups) do em:line("const " .. V.ty .. " " .. wname[g[1]] .. " = " .. V.set1(g[1]) .. ";") end
  end
  if cb then
    if cb.rows and cb.br.decl then em:line(cb.br.decl) end
    if cb.cols and cb.bc.decl then em:line(cb.bc.decl) end
  end
  -- the row loop variable (the one tiled by rows): i in 2-D, j in 3-D
  local rowv = S.dims == 2 and i or j
  local omp_done = false
  local function omp_here(collapse)
    if set.omp and not omp_done then
      em:pragma("#pragma omp parallel for" .. (collapse and " collapse(2)" or "") .. sched)
      omp_done = true
    end
  end
  local collapse_ok = rng:chance(0.4)
  -- outer loops
  if S.dims == 3 then
    omp_here(collapse_ok and not cb)
    em:open(string.format("for (long %s = 0; %s < n; %s)", i, i, inc(st, i)))
  end
  local rb_, cb_ = "rb", "cbk"
  local rend, cend = "rend", "cend"
  if cb and cb.rows then
    local rb0 = rowv .. "b"
    rb_ = rb0
    omp_here(collapse_ok and cb.cols)
    em:open(string.format("for (long %s = 0; %s < n; %s += %s)", rb0, rb0, rb0, cb.br.name))
  end
  if cb and cb.cols then
    local cb0 = inner .. "b"
    cb_ = cb0
    omp_here(false)
    em:open(string.format("for (long %s = 0; %s < n; %s += %s)", cb0, cb0, cb0, cb.bc.name))
    em:line(string.format("const long %s = %s + %s < n ? %s + %s : n;", cend, cb0, cb.bc.name, cb0, cb.bc.name))
  end
  if cb and cb.rows then
    em:line(string.format("const long %s = %s + %s < n ? %s + %s : n;", rend, rb_, cb.br.name, rb_, cb.br.name))
    em:open(string.format("for (long %s = %s; %s < %s; %s)", rowv, rb_, rowv, rend, inc(st, rowv)))
  else
    omp_here(false)
    em:open(string.format("for (long %s = 0; %s < n; %s)", rowv, rowv, inc(st, rowv)))
  end
  -- the centre pointer and output row
  if S.dims == 2 then
    em:line(string.format("const double *%s = u + (%s + 1) * s + 1;", c, i))
    em:line(string.format("double *%s = v + %s * n;", o, i))
  else
    em:line(string.format("const double *%s = u + (%s + 1) * p + (%s + 1) * s + 1;", c, i, j))
    em:line(string.format("double *%s = v + (%s * n + %s) * n;", o, i, j))
  end
  local lo = (cb and cb.cols) and cb_ or "0"
  local hi = (cb and cb.cols) and cend or "n"
  local function pfline(idx)
    if pf then
      local off = rng:pick({"s", "2 * s", "s + " .. pf.dist, tostring(pf.dist)})
      if S.dims == 3 and rng:chance(0.5) then off = "p" end
      em:line(pf_stmt(pf, c .. " + " .. idx .. " + " .. off, false))
    end
  end
  -- the inner loop: its first header starts at lo (a tile's variable when columns are tiled)
  local x = inner
  if V then
    local U = rb and rng:pick({2, 2, 4}) or 1
    local step = U * V.w
    if lo == "0" and rng:chance(0.5) then
      em:line("long " .. x .. " = 0;")
      em:open(string.format("for (; %s + %d <= %s; %s += %d)", x, step, hi, x, step))
    else
      -- a loop starting at lo; x is then declared outside for the remainder
      em:line("long " .. x .. ";")
      em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", x, lo, x, step, hi, x, step))
    end
    pfline(x)
    if U == 1 then
      if rng:chance(0.5) then
        em:line(V.st(o .. " + " .. x, vexpr(x)))
      else
        local r = rng:pick({"r", "res", "val"})
        em:line(V.ty .. " " .. r .. " = " .. vexpr(x) .. ";")
        em:line(V.st(o .. " + " .. x, r))
      end
    else
      local pre = rng:pick({"r", "acc", "t"})
      for u = 0, U - 1 do
        local idx = ix(x, u * V.w)
        em:line(V.ty .. " " .. pre .. u .. " = " .. V.mul(wname[groups[1][1]], vsum(idx, groups[1])) .. ";")
      end
      for gi = 2, #groups do
        for u = 0, U - 1 do
          local idx = ix(x, u * V.w)
          em:line(pre .. u .. " = " .. V.fma(wname[groups[gi][1]], vsum(idx, groups[gi]), pre .. u) .. ";")
        end
      end
      for u = 0, U - 1 do em:line(V.st(o .. " + " .. ix(x, u * V.w), pre .. u)) end
    end
    em:close()
    em:line(string.format("for (; %s < %s; %s) %s[%s] = %s;", x, hi, inc(st, x), o, x, sexpr(x)))
  elseif rb then
    local U = rng:pick({2, 2, 4})
    if lo == "0" and rng:chance(0.5) then
      em:line("long " .. x .. " = 0;")
      em:open(string.format("for (; %s + %d <= %s; %s += %d)", x, U, hi, x, U))
    else
      em:line("long " .. x .. ";")
      em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", x, lo, x, U, hi, x, U))
    end
    pfline(x)
    local pre = rng:pick({"r", "acc", "t"})
    local function gsum(idx, g)
      local ts = {}
      for q, off in ipairs(g[2]) do ts[q] = c .. "[" .. at(idx, off) .. "]" end
      return g[1] .. " * " .. (#ts == 1 and ts[1] or ("(" .. table.concat(ts, " + ") .. ")"))
    end
    for u = 0, U - 1 do em:line("double " .. pre .. u .. " = " .. gsum(ix(x, u), groups[1]) .. ";") end
    for gi = 2, #groups do
      for u = 0, U - 1 do em:line(pre .. u .. " += " .. gsum(ix(x, u), groups[gi]) .. ";") end
    end
    for u = 0, U - 1 do em:line(o .. "[" .. ix(x, u) .. "] = " .. pre .. u .. ";") end
    em:close()
    em:line(string.format("for (; %s < %s; %s) %s[%s] = %s;", x, hi, inc(st, x), o, x, sexpr(x)))
  else
    em:open(string.format("for (long %s = %s; %s < %s; %s)", x, lo, x, hi, inc(st, x)))
    pfline(x)
    em:line(string.format("%s[%s] = %s;", o, x, sexpr(x)))
    em:close()
  end
  -- close the row loop, the tiles and the plane loop
  em:close()
  if cb and cb.cols then em:close() end
  if cb and cb.rows then em:close() end
  if S.dims == 3 then em:close() end
  em:close()
  return em:text()
end

---------------------------------------------------------------------------------------
-- blas2: gemv_n (row dot products), gemv_t and ger (axpy updates of rows)
---------------------------------------------------------------------------------------

-- A tile size and the lines it needs: form "define" (top), "const" (decl) or a literal.
local function sample_cb_form(rng) return rng:pick({"define", "define", "const", "literal"}) end

-- dst[j] += src[j] * coef for lo <= j < hi (coefv: the coefficient as a vector),
-- unrolled by U (scalars or vectors); j is declared here.
local function row_update(em, rng, c)
  local V, U, j, st = c.V, c.U, c.j, c.st
  local function scalar(idx) return string.format("%s[%s] += %s[%s] * %s;", c.dst, idx, c.src, idx, c.coef) end
  local function pfline(idx)
    if c.pf then em:line(pf_stmt(c.pf, c.src .. " + " .. idx .. " + " .. c.pf.dist, false)) end
  end
  if not V and U == 1 then
    em:open(string.format("for (long %s = %s; %s < %s; %s)", j, c.lo, j, c.hi, inc(st, j)))
    pfline(j)
    em:line(scalar(j))
    em:close()
    return
  end
  local step = U * (V and V.w or 1)
  em:line("long " .. j .. ";")
  em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", j, c.lo, j, step, c.hi, j, step))
  pfline(j)
  if not V then
    for u = 0, U - 1 do em:line(scalar(ix(j, u))) end
  elseif U == 1 then
    em:line(V.st(c.dst .. " + " .. j, V.fma(V.ld(c.src .. " + " .. j), c.coefv, V.ld(c.dst .. " + " .. j))))
  else
    local pre = rng:pick({"r", "vd", "cv"})
    for u = 0, U - 1 do em:line(V.ty .. " " .. pre .. u .. " = " .. V.ld(c.dst .. " + " .. ix(j, u * V.w)) .. ";") end
    for u = 0, U - 1 do
      em:line(pre .. u .. " = " .. V.fma(V.ld(c.src .. " + " .. ix(j, u * V.w)), c.coefv, pre .. u) .. ";")
    end
    for u = 0, U - 1 do em:line(V.st(c.dst .. " + " .. ix(j, u * V.w), pre .. u)) end
  end
  em:close()
  em:line(string.format("for (; %s < %s; %s) %s", j, c.hi, inc(st, j), scalar(j)))
end

local function start(rng, set)
  local st = sample_style(rng)
  local em = emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  return st, em, set.prefetch and sample_pf(rng) or nil, set.omp and sample_sched(rng) or ""
end

local function gen_ger(rng, set, isa)
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  includes(em, set, pf, false, rng)
  if st.comment then em:line("/* A += alpha * x * y^T, one row at a time */") end
  em:open("void ger(int m, int n, double alpha, const double *x, const double *y, double *A)")
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open("for (long i = 0; i < m; " .. inc(st, "i") .. ")")
  local ax, a = rng:pick({"ax", "s", "coef"}), rng:pick({"a", "row", "Ai"})
  em:line(string.format("const double %s = alpha * x[i];", ax))
  em:line(string.format("double *%s = A + i * n;", a))
  local axv = "v" .. ax
  if V then em:line("const " .. V.ty .. " " .. axv .. " = " .. V.set1(ax) .. ";") end
  row_update(em, rng, {V = V, U = set.register_blocking and (V and rng:pick({2, 4}) or rng:pick({2, 4, 8})) or 1,
                       j = "j", st = st, lo = "0", hi = "n", dst = a, src = "y", coef = ax, coefv = axv, pf = pf})
  em:close()
  em:close()
  return em:text()
end

local function gen_gemv_t(rng, set, isa)
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local cb
  if set.cache_blocking then
    cb = {form = sample_cb_form(rng), rows = rng:chance(0.5)}
    cb.bj = block_size(rng, rng:pick({"BJ", "NB", "TILE"}), rng:pick({64, 128, 256, 512}), cb.form)
    cb.bi = block_size(rng, rng:pick({"BI", "MB", "ROWS"}), rng:pick({16, 32, 64}), cb.form)
  end
  local manual = set.omp and not cb
  includes(em, set, pf, false, rng)
  if manual and not table.concat(em.out, "\n"):find("omp.h", 1, true) then
    table.insert(em.out, 1, "#include <omp.h>")
    if #em.out == 1 then em:line("") end
  end
  if cb then
    if cb.bj.top then em:line(cb.bj.top) end
    if cb.rows and cb.bi.top then em:line(cb.bi.top) end
    if cb.bj.top or (cb.rows and cb.bi.top) then em:line("") end
  end
  if st.comment then em:line("/* y = A^T x as a sum of scaled rows of A */") end
  em:open("void gemv_t(int m, int n, const double *A, const double *x, double *y)")
  if cb then
    if cb.bj.decl then em:line(cb.bj.decl) end
    if cb.rows and cb.bi.decl then em:line(cb.bi.decl) end
  end
  local lo, hi = "0", "n"
  local closes = 0
  if cb then
    if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
    em:open(string.format("for (long jb = 0; jb < n; jb += %s)", cb.bj.name))
    em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", cb.bj.name, cb.bj.name))
    lo, hi = "jb", "jend"
    closes = 1
  elseif manual then
    local id, nt = rng:pick({"id", "tid", "me"}), rng:pick({"nt", "nth", "team"})
    em:pragma("#pragma omp parallel")
    em:line("{")
    em.depth = em.depth + 1
    em:line(string.format("const int %s = omp_get_thread_num(), %s = omp_get_num_threads();", id, nt))
    em:line(string.format("const long lo = (long)n * %s / %s, hi = (long)n * (%s + 1) / %s;", id, nt, id, nt))
    lo, hi = "lo", "hi"
    closes = 1
  end
  em:line(string.format("for (long j = %s; j < %s; %s) y[j] = 0.0;", lo, hi, inc(st, "j")))
  local rows_lo, rows_hi = "0", "m"
  if cb and cb.rows then
    em:open(string.format("for (long ib = 0; ib < m; ib += %s)", cb.bi.name))
    em:line(string.format("const long iend = ib + %s < m ? ib + %s : m;", cb.bi.name, cb.bi.name))
    rows_lo, rows_hi = "ib", "iend"
    closes = closes + 1
  end
  em:open(string.format("for (long i = %s; i < %s; %s)", rows_lo, rows_hi, inc(st, "i")))
  local xi, a = rng:pick({"xi", "s", "xv_i"}), rng:pick({"a", "row", "Ai"})
  em:line(string.format("const double %s = x[i];", xi))
  em:line(string.format("const double *%s = A + i * n;", a))
  if V then em:line("const " .. V.ty .. " v" .. xi .. " = " .. V.set1(xi) .. ";") end
  row_update(em, rng, {V = V, U = set.register_blocking and (V and rng:pick({2, 4}) or rng:pick({2, 4, 8})) or 1,
                       j = "j", st = st, lo = lo, hi = hi, dst = "y", src = a, coef = xi, coefv = "v" .. xi, pf = pf})
  em:close()
  for _ = 1, closes do em:close() end
  em:close()
  return em:text()
end

local function gen_gemv_n(rng, set, isa)
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local R = set.register_blocking and rng:pick({2, 2, 4}) or 1
  local cb
  if set.cache_blocking then
    cb = {form = sample_cb_form(rng), rows = rng:chance(0.5)}
    cb.bj = block_size(rng, rng:pick({"BJ", "NB", "TILE"}), rng:pick({64, 128, 256, 512}), cb.form)
    cb.bi = block_size(rng, rng:pick({"BI", "MB", "ROWS"}), rng:pick({16, 32, 64}), cb.form)
  end
  local hsum = rng:pick({"hsum", "hadd", "lanes"})
  local use_reduce = V and isa == "avx512" and rng:chance(0.5)
  includes(em, set, pf, false, rng)
  if cb then
    if cb.bj.top then em:line(cb.bj.top) end
    if cb.rows and cb.bi.top then em:line(cb.bi.top) end
    if cb.bj.top or (cb.rows and cb.bi.top) then em:line("") end
  end
  if V and not use_reduce then
    em:open("static inline double " .. hsum .. "(" .. V.ty .. " v)")
    em:line("double t[" .. V.w .. "];")
    em:line(V.st("t", "v"))
    local parts = {}
    for k = 0, V.w - 1, 2 do parts[#parts + 1] = "(t[" .. k .. "] + t[" .. (k + 1) .. "])" end
    em:line("return " .. table.concat(parts, " + ") .. ";")
    em:close()
    em:line("")
  end
  if st.comment then em:line("/* y = A x: " .. (R > 1 and (R .. " rows at a time") or "one row at a time") .. " */") end
  em:open("void gemv_n(int m, int n, const double *A, const double *x, double *y)")
  if cb then
    if cb.bj.decl then em:line(cb.bj.decl) end
    if cb.rows and cb.bi.decl then em:line(cb.bi.decl) end
  end
  local sname = rng:pick({"s", "sum", "t"})
  local vname = rng:pick({"acc", "vs", "vsum"})
  local pname = rng:pick({"a", "row", "p"})
  local lo, hi = "0", "n"
  local closes = 0
  local omp_pending = set.omp
  local function omp_here()
    if omp_pending then em:pragma("#pragma omp parallel for" .. sched); omp_pending = false end
  end
  if cb and cb.rows then
    omp_here()
    em:open(string.format("for (long ib = 0; ib < m; ib += %s)", cb.bi.name))
    em:line(string.format("const long iend = ib + %s < m ? ib + %s : m;", cb.bi.name, cb.bi.name))
    closes = closes + 1
  end
  if cb then
    em:open(string.format("for (long jb = 0; jb < n; jb += %s)", cb.bj.name))
    em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", cb.bj.name, cb.bj.name))
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
      if pf then em:line(pf_stmt(pf, pn[0] .. " + j + " .. pf.dist, false)) end
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
      if pf then em:line(pf_stmt(pf, pn[0] .. " + j + " .. pf.dist, false)) end
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

---------------------------------------------------------------------------------------
-- Kernels
---------------------------------------------------------------------------------------

local generators = {
  axpy = function(rng, set, isa) return gen_axpy(rng, set, isa) end,
  gemv_n = function(rng, set, isa) return gen_gemv_n(rng, set, isa) end,
  gemv_t = function(rng, set, isa) return gen_gemv_t(rng, set, isa) end,
  ger = function(rng, set, isa) return gen_ger(rng, set, isa) end,
}
for name in pairs(reductions) do
  generators[name] = function(rng, set, isa) return gen_reduction(rng, name, set, isa) end
end
for name in pairs(stencils) do
  generators[name] = function(rng, set, isa) return gen_stencil(rng, name, set, isa) end
end

local covered = set_of(M.tasks)

local function spec(name)
  if not covered[name] then
    error(string.format("kernelgen.tasks: task '%s' is not covered (covered: %s)", tostring(name),
                        table.concat(M.tasks, ", ")), 3)
  end
  return etasks.get(name)
end

-- The techniques a kernel of `name` may use under `allowed` (nil: the spec's).
function M.techniques(name, allowed)
  local own = set_of(spec(name).techniques)
  local a = allowed and set_of(allowed) or own
  local out = {}
  for _, t in ipairs(TECH) do if own[t] and a[t] then out[#out + 1] = t end end
  return out
end

-- opts: allowed, require (technique lists), isa ("avx512" or "avx2"; nil: either),
-- richness (the chance of each allowed, not required technique: 0.6).
function M.kernel(rng, name, opts)
  opts = opts or {}
  local sp = spec(name)
  local isa = opts.isa or (rng:chance(0.5) and "avx512" or "avx2")
  if not VEC[isa] then
    error(string.format("kernelgen.tasks: unknown ISA '%s' (expected avx512 or avx2)", tostring(isa)), 2)
  end
  local may = set_of(M.techniques(name, opts.allowed))
  local set = {}
  for _, t in ipairs(opts.require or {}) do
    if not may[t] then
      error(string.format("kernelgen.tasks: technique '%s' is required but not allowed for %s", tostring(t), name), 2)
    end
    set[t] = true
  end
  local q = opts.richness or 0.6
  for _, t in ipairs(TECH) do
    if may[t] and not set[t] and rng:chance(q) then set[t] = true end
  end
  local code = generators[name](rng, set, isa)
  local techniques = {}
  for _, t in ipairs(TECH) do if set[t] then techniques[#techniques + 1] = t end end
  return {code = code, techniques = techniques, task = name, isa = isa, prototype = sp.prototype,
          lines = select(2, code:gsub("\n", ""))}
end

---------------------------------------------------------------------------------------
-- Examples and corpora
---------------------------------------------------------------------------------------

local lead_ins = {"Here is the kernel:", "Here is an optimised kernel:", "The kernel:", "Here is the code:"}

local function completion(rng, code)
  local lead = rng:chance(0.4) and (rng:pick(lead_ins) .. "\n\n") or ""
  return lead .. "```c\n" .. code:gsub("%s+$", "") .. "\n```"
end

M.kinds = {"fixed", "write"}
M.default_mix = {fixed = 0.45, write = 0.55}
M.default_isa_mix = {avx512 = 0.5, avx2 = 0.5}

-- opts: task (a covered name), kind ("fixed" or "write"), stage (for "write"; default
-- drawn over the task's ladder), isa ("avx512", the default, or "avx2").
function M.example(rng, opts)
  opts = opts or {}
  local name = opts.task or rng:pick(M.tasks)
  spec(name)
  local kind = opts.kind or "write"
  local isa = opts.isa or "avx512"
  if not VEC[isa] then
    error(string.format("kernelgen.tasks.example: unknown ISA '%s' (expected avx512 or avx2)", tostring(isa)), 2)
  end
  local ladder = stages.for_task(name)
  local ptask = {name = name, size = "train", isa = isa}
  local ex = {kind = kind, task = name, isa = isa}
  if kind == "fixed" then
    local all = prompts.fixed(ptask)
    ex.messages = all[rng:int(1, #all)]
    ex.stage = ladder.count
    ex.kernel = M.kernel(rng, name, {isa = isa, richness = 0.75})
  elseif kind == "write" then
    local s = opts.stage or rng:int(1, ladder.count)
    ex.stage = s
    local stage = ladder.get(s)
    local intro = stage.introduces
    ex.messages = prompts.write(s, ptask)
    ex.kernel = M.kernel(rng, name, {isa = isa, allowed = stage.allowed,
                                     require = (intro and rng:chance(0.75)) and {intro} or nil})
  else
    error(string.format("kernelgen.tasks.example: unknown kind '%s' (expected fixed or write)", tostring(kind)), 2)
  end
  ex.completion = completion(rng, ex.kernel.code)
  ex.techniques = ex.kernel.techniques
  return ex
end

-- n examples going round the covered tasks (or opts.tasks), each task's in turn.
-- opts: seed (1), mix ({fixed =, write =}), isa (one ISA or {isa = share}).
function M.corpus(n, opts)
  opts = opts or {}
  if math.type(n) ~= "integer" or n < 0 then error("kernelgen.tasks.corpus: n must be a non-negative integer", 2) end
  local rng = require("kernelgen").rng(opts.seed or 1)
  local names = opts.tasks or M.tasks
  for _, name in ipairs(names) do spec(name) end
  local mix = opts.mix or M.default_mix
  local isas = opts.isa or M.default_isa_mix
  local out = {}
  for idx = 1, n do
    local name = names[(idx - 1) % #names + 1]
    local isa = type(isas) == "string" and isas or rng:weighted(isas)
    out[idx] = M.example(rng, {task = name, kind = rng:weighted(mix), isa = isa})
  end
  return out
end

return M
