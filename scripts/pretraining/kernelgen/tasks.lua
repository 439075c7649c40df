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
-- (jacobi2d_5, jacobi2d_9, jacobi3d_7), blas2 (gemv_n, gemv_t, ger, symv, trsv), sparse
-- (spmv_csr), scan (prefix_sum, col_sums), transpose and blas3 (gemm_tn, gemm_batched,
-- syrk, trmm, trsm: rows of C as sums of scaled rows, column-unrolled; syrk as mirrored
-- dot products in square tiles; trsm threads and tiles over columns, its rows being a
-- substitution). Each task composes every subset of its spec's techniques (trsv's spec
-- lists no omp: each unknown needs all the previous ones). The AVX2 kernels use only intrinsics the kernel compiler's header has: no
-- gathers, permutes or andnot (spmv_csr gathers with _mm*_set(r)_pd, prefix_sum shifts a
-- vector by reloading it from a zero-padded buffer, transpose unpacks 4 x 4 blocks into
-- 128-bit halves or gathers down a column). What varies:
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

M.tasks = {"axpy", "dot", "nrm2", "asum", "jacobi2d_5", "jacobi2d_9", "jacobi3d_7", "gemv_n", "gemv_t", "ger",
           "symv", "trsv", "spmv_csr", "prefix_sum", "col_sums", "transpose", "gemm_tn", "gemm_batched", "syrk",
           "trmm", "trsm"}
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
-- blas2 on triangles: symv (the lower triangle serves both halves) and trsv (forward
-- substitution); shared: a dot product over a range and an axpy over a range.
---------------------------------------------------------------------------------------

-- A static inline horizontal sum of a vector, named `name`.
local function emit_hsum(em, V, name)
  em:open("static inline double " .. name .. "(" .. V.ty .. " v)")
  em:line("double t[" .. V.w .. "];")
  em:line(V.st("t", "v"))
  local parts = {}
  for k = 0, V.w - 1, 2 do parts[#parts + 1] = "(t[" .. k .. "] + t[" .. (k + 1) .. "])" end
  em:line("return " .. table.concat(parts, " + ") .. ";")
  em:close()
  em:line("")
end

-- Declares `double c.out` = sum of c.p[j] * c.x[j] for c.lo <= j < c.hi: scalar or vector
-- (c.V), unrolled by c.U with c.U partial sums (register blocking when c.U > 1). The
-- accumulators are named c.acc (vectors) and c.out / c.sp..u (scalars): one kernel keeps
-- the same names in every call, so that a kernel without register blocking has one of each.
local function dot_seg(em, c)
  local V, U, j, st, p, x = c.V, c.U, c.j, c.st, c.p, c.x
  local function term(idx) return string.format("%s[%s] * %s[%s]", p, idx, x, idx) end
  if not V and U == 1 then
    em:line(string.format("double %s = 0.0;", c.out))
    em:line(string.format("for (long %s = %s; %s < %s; %s) %s += %s;", j, c.lo, j, c.hi, inc(st, j), c.out, term(j)))
    return
  end
  em:line("long " .. j .. ";")
  if not V then
    local names, inits = {}, {}
    for u = 0, U - 1 do names[u + 1] = c.sp .. u; inits[u + 1] = c.sp .. u .. " = 0.0" end
    em:line("double " .. table.concat(inits, ", ") .. ";")
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", j, c.lo, j, U, c.hi, j, U))
    for u = 0, U - 1 do em:line(string.format("%s += %s;", names[u + 1], term(ix(j, u)))) end
    em:close()
    local parts = {}
    for u = 1, U, 2 do parts[#parts + 1] = "(" .. names[u] .. " + " .. names[u + 1] .. ")" end
    em:line(string.format("double %s = %s;", c.out, table.concat(parts, " + ")))
  else
    local step = U * V.w
    local accs = {}
    for u = 1, U do accs[u] = U == 1 and c.acc or (c.acc .. (u - 1)) end
    for _, a in ipairs(accs) do em:line(V.ty .. " " .. a .. " = " .. V.zero() .. ";") end
    em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", j, c.lo, j, step, c.hi, j, step))
    for u = 1, U do
      local idx = ix(j, (u - 1) * V.w)
      em:line(accs[u] .. " = " .. V.fma(V.ld(p .. " + " .. idx), V.ld(x .. " + " .. idx), accs[u]) .. ";")
    end
    em:close()
    local whole = tree(accs, V.add)
    local h = c.reduce and ("_mm512_reduce_add_pd(" .. whole .. ")") or (c.hsum .. "(" .. whole .. ")")
    em:line(string.format("double %s = %s;", c.out, h))
  end
  em:line(string.format("for (; %s < %s; %s) %s += %s;", j, c.hi, inc(st, j), c.out, term(j)))
end

-- dst[j] += src[j] * coef for lo <= j < hi, like row_update, but a kernel without
-- register blocking writes its scalar updates as dst[j] = dst[j] + ... (no second scalar
-- accumulator beside a dot product's); unrolled scalar updates are accumulators.
local function axpy_seg(em, rng, c)
  local V, U, j, st = c.V, c.U, c.j, c.st
  local function plain(idx)
    if c.flip then return string.format("%s[%s] = %s[%s] * %s + %s[%s];", c.dst, idx, c.src, idx, c.coef, c.dst, idx) end
    return string.format("%s[%s] = %s[%s] + %s[%s] * %s;", c.dst, idx, c.dst, idx, c.src, idx, c.coef)
  end
  if not V and U == 1 then
    em:line(string.format("for (long %s = %s; %s < %s; %s) %s", j, c.lo, j, c.hi, inc(st, j), plain(j)))
    return
  end
  local step = U * (V and V.w or 1)
  em:line("long " .. j .. ";")
  em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", j, c.lo, j, step, c.hi, j, step))
  if not V then
    for u = 0, U - 1 do
      em:line(string.format("%s[%s] += %s[%s] * %s;", c.dst, ix(j, u), c.src, ix(j, u), c.coef))
    end
  elseif U == 1 then
    em:line(V.st(c.dst .. " + " .. j, V.fma(V.ld(c.src .. " + " .. j), c.coefv, V.ld(c.dst .. " + " .. j))))
  else
    local pre = c.pre
    for u = 0, U - 1 do em:line(V.ty .. " " .. pre .. u .. " = " .. V.ld(c.dst .. " + " .. ix(j, u * V.w)) .. ";") end
    for u = 0, U - 1 do
      em:line(pre .. u .. " = " .. V.fma(V.ld(c.src .. " + " .. ix(j, u * V.w)), c.coefv, pre .. u) .. ";")
    end
    for u = 0, U - 1 do em:line(V.st(c.dst .. " + " .. ix(j, u * V.w), pre .. u)) end
  end
  em:close()
  em:line(string.format("for (; %s < %s; %s) %s", j, c.hi, inc(st, j), plain(j)))
end

local function ensure_omp_h(em)
  if not table.concat(em.out, "\n"):find("omp.h", 1, true) then
    table.insert(em.out, 1, "#include <omp.h>")
    if #em.out == 1 then em:line("") end
  end
end

-- symv: y[i] = (row i of the lower triangle) . x, then the strict lower triangle read as
-- the upper: y[j] += A[i][j] x[i] for j < i (over column ranges, so threads never share a y[j]).
local function gen_symv(rng, set, isa)
  local st, em, _, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local rb = set.register_blocking
  local cb
  if set.cache_blocking then
    cb = {bj = block_size(rng, rng:pick({"BJ", "NB", "TILE"}), rng:pick({32, 64, 128, 256}), sample_cb_form(rng))}
  end
  local manual = set.omp and not cb
  local hsum = rng:pick({"hsum", "hadd", "lanes"})
  local reduce = V and isa == "avx512" and rng:chance(0.5)
  includes(em, set, nil, false, rng)
  if manual then ensure_omp_h(em) end
  if cb and cb.bj.top then em:line(cb.bj.top); em:line("") end
  if V and not reduce then emit_hsum(em, V, hsum) end
  if st.comment then em:line("/* y = A x from the lower triangle: each stored entry is used twice */") end
  em:open("void symv(int n, const double *A, const double *x, double *y)")
  if cb and cb.bj.decl then em:line(cb.bj.decl) end
  local a = rng:pick({"a", "row", "Ai"})
  local out = rng:pick({"s", "sum", "dotv"})
  local acc = rng:pick({"acc", "vs", "vsum"})
  local xi = rng:pick({"xi", "c", "xv_i"})
  local pre = rng:pick({"r", "vd", "cv"})
  local flip = rng:chance(0.5)
  -- the rows: the diagonal and the lower triangle
  if st.comment then em:line("/* row i, columns 0..i */") end
  if set.omp then em:pragma("#pragma omp parallel for" .. sched) end
  em:open(string.format("for (long i = 0; i < n; %s)", inc(st, "i")))
  em:line(string.format("const double *%s = A + i * n;", a))
  dot_seg(em, {V = V, U = rb and rng:pick({1, 2, 4}) or 1, st = st, j = "j", p = a, x = "x", lo = "0",
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
    axpy_seg(em, rng, {V = V, U = U, j = "j", st = st, lo = lo, hi = h, dst = "y", src = a, coef = xi,
                       coefv = "v" .. xi, pre = pre, flip = flip})
    em:close()
  end
  if cb then
    if set.omp then em:pragma("#pragma omp parallel for" .. (sched ~= "" and sched or " schedule(dynamic)")) end
    em:open(string.format("for (long jb = 0; jb < n; jb += %s)", cb.bj.name))
    em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", cb.bj.name, cb.bj.name))
    row_body("jb + 1", "jb", "jend")
    em:close()
  elseif manual then
    local id, nt = rng:pick({"id", "tid", "me"}), rng:pick({"nt", "nth", "team"})
    em:pragma("#pragma omp parallel")
    em:line("{")
    em.depth = em.depth + 1
    em:line(string.format("const int %s = omp_get_thread_num(), %s = omp_get_num_threads();", id, nt))
    em:line(string.format("const long lo = (long)n * %s / %s, hi = (long)n * (%s + 1) / %s;", id, nt, id, nt))
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
  local st, em = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local rb = set.register_blocking
  local cb
  if set.cache_blocking then
    cb = {bs = block_size(rng, rng:pick({"BS", "NB", "TILE"}), rng:pick({16, 32, 64}), sample_cb_form(rng)),
          right = rng:chance(0.5)}
  end
  local hsum = rng:pick({"hsum", "hadd", "lanes"})
  local reduce = V and isa == "avx512" and rng:chance(0.5)
  includes(em, set, nil, false, rng)
  if cb and cb.bs.top then em:line(cb.bs.top); em:line("") end
  if V and not reduce then emit_hsum(em, V, hsum) end
  if st.comment then em:line("/* forward substitution, L lower triangular */") end
  em:open("void trsv(int n, const double *L, const double *b, double *x)")
  if cb and cb.bs.decl then em:line(cb.bs.decl) end
  local l = rng:pick({"l", "row", "Li"})
  local out = rng:pick({"s", "dot", "t"})
  local acc = rng:pick({"acc", "vs", "vsum"})
  local U = rb and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
  local recip = rng:chance(0.3)
  local function solve(lhs) -- x[i] from lhs (b[i] or x[i]) minus the dot
    if recip then return string.format("x[i] = (%s - %s) * (1.0 / %s[i]);", lhs, out, l) end
    return string.format("x[i] = (%s - %s) / %s[i];", lhs, out, l)
  end
  local function dot(lo, hi)
    dot_seg(em, {V = V, U = U, st = st, j = "j", p = l, x = "x", lo = lo, hi = hi, out = out, acc = acc,
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
    em:open(string.format("for (long ib = 0; ib < n; ib += %s)", cb.bs.name))
    em:line(string.format("const long iend = ib + %s < n ? ib + %s : n;", cb.bs.name, cb.bs.name))
    if st.comment then em:line("/* the solved unknowns left of the block */") end
    rows("ib", "iend", "0", "ib", string.format("x[i] = b[i] - %s;", out))
    if st.comment then em:line("/* the diagonal block */") end
    rows("ib", "iend", "ib", "i", solve("x[i]"))
    em:close()
  else
    em:line(string.format("for (long i = 0; i < n; %s) x[i] = b[i];", inc(st, "i")))
    em:open(string.format("for (long kb = 0; kb < n; kb += %s)", cb.bs.name))
    em:line(string.format("const long kend = kb + %s < n ? kb + %s : n;", cb.bs.name, cb.bs.name))
    if st.comment then em:line("/* solve the diagonal block */") end
    rows("kb", "kend", "kb", "i", solve("x[i]"))
    if st.comment then em:line("/* and take its unknowns out of the rows below */") end
    rows("kend", "n", "kb", "kend", string.format("x[i] -= %s;", out))
    em:close()
  end
  em:close()
  return em:text()
end

---------------------------------------------------------------------------------------
-- sparse: spmv_csr
---------------------------------------------------------------------------------------

local function gen_spmv(rng, set, isa)
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local rb = set.register_blocking
  local hsum = rng:pick({"hsum", "hadd", "lanes"})
  local reduce = V and isa == "avx512" and rng:chance(0.5)
  includes(em, set, pf, false, rng)
  if V and not reduce then emit_hsum(em, V, hsum) end
  if st.comment then em:line("/* y = A x, A in CSR form: one row's nonzeros at a time */") end
  em:open("void spmv_csr(int rows, int cols, const int *row_ptr, const int *col_idx, const double *val, "
          .. "const double *x, double *y)")
  if rng:chance(0.5) then em:line("(void)cols;") end
  local pty = rng:pick({"int", "long"})
  local p = rng:pick({"p", "k", "q"})
  local s = rng:pick({"s", "sum", "t"})
  local beg, fin = rng:pick({"beg", "start", "lo"}), rng:pick({"end", "stop", "hi"})
  local ci = rng:chance(0.5) and "col_idx" or nil
  if set.omp then em:pragma("#pragma omp parallel for" .. (sched ~= "" and sched or rng:pick({"", " schedule(dynamic, 64)"}))) end
  em:open(string.format("for (%s i = 0; i < rows; %s)", st.ity, inc(st, "i")))
  em:line(string.format("const %s %s = row_ptr[i], %s = row_ptr[i + 1];", pty, beg, fin))
  local function xat(idx) return string.format("x[col_idx[%s]]", idx) end
  local function term(idx) return string.format("val[%s] * %s", idx, xat(idx)) end
  local function pfline(idx)
    if pf then
      local tgt = ci and rng:pick({"val", "col_idx"}) or "val"
      em:line(pf_stmt(pf, tgt .. " + " .. idx .. " + " .. pf.dist, false))
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
    local parts = {}
    for u = 1, U, 2 do parts[#parts + 1] = "(" .. names[u] .. " + " .. names[u + 1] .. ")" end
    em:line(string.format("double %s = %s;", s, table.concat(parts, " + ")))
  else
    local accp = rng:pick({"acc", "va", "vs"})
    local g = rng:pick({"xg", "gx", "xs"})
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
    local whole = tree(accs, V.add)
    local h = reduce and ("_mm512_reduce_add_pd(" .. whole .. ")") or (hsum .. "(" .. whole .. ")")
    em:line(string.format("double %s = %s;", s, h))
  end
  em:line(string.format("for (; %s < %s; %s) %s += %s;", p, fin, inc(st, p), s, term(p)))
  em:line(string.format("y[i] = %s;", s))
  em:close()
  em:close()
  return em:text()
end

---------------------------------------------------------------------------------------
-- scan: prefix_sum, col_sums
---------------------------------------------------------------------------------------

-- Scans x[lo..hi) into y with the running sum `s` (a declared double): scalar, small
-- blocks of U scanned in a local array (register blocking: loops starting at the strided
-- index), or vectors scanned in register by shifted reloads from a zero-padded buffer
-- (U vectors: register blocking), the carry added as a broadcast.
local function scan_seg(em, rng, c)
  local V, U, st, s, i = c.V, c.U, c.st, c.s, c.i
  local function pfline()
    if c.pf then em:line(pf_stmt(c.pf, "x + " .. i .. " + " .. c.pf.dist, false)) end
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
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local rb = set.register_blocking
  local U = rb and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
  local cb
  if set.cache_blocking then
    cb = {bs = block_size(rng, rng:pick({"BS", "BLOCK", "TILE"}), rng:pick({64, 128, 256, 512}), sample_cb_form(rng))}
  end
  local ch
  if set.omp then
    ch = block_size(rng, rng:pick({"NCH", "CHUNKS", "NPART"}), rng:pick({16, 32, 64}), sample_cb_form(rng))
  end
  includes(em, set, pf, false, rng)
  local tops = false
  if cb and cb.bs.top then em:line(cb.bs.top); tops = true end
  if ch and ch.top then em:line(ch.top); tops = true end
  if tops then em:line("") end
  if st.comment then
    em:line("/* inclusive scan" .. (ch and ": chunks scanned in parallel, then shifted by their offsets" or "") .. " */")
  end
  em:open("void prefix_sum(int n, const double *x, double *y)")
  if cb and cb.bs.decl then em:line(cb.bs.decl) end
  if ch and ch.decl then em:line(ch.decl) end
  local s = rng:pick({"s", "run", "acc"})
  local names = {r = rng:pick({"r", "loc", "part_"}), t = rng:pick({"t", "bsum", "local"}),
                 buf = rng:pick({"buf", "pad", "sh"}), v = rng:pick({"v", "cur", "vx"})}
  local function body(lo, hi)
    if cb then
      em:open(string.format("for (long ib = %s; ib < %s; ib += %s)", lo, hi, cb.bs.name))
      em:line(string.format("const long iend = ib + %s < %s ? ib + %s : %s;", cb.bs.name, hi, cb.bs.name, hi))
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
    local part, c = rng:pick({"part", "tot", "offs"}), rng:pick({"c", "q", "ch"})
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
    local run = rng:pick({"base", "off", "carry"})
    em:line(string.format("double %s = 0.0;", run))
    em:line(string.format("for (int %s = 0; %s < %s; %s) { const double t_ = %s[%s]; %s[%s] = %s; %s += t_; }",
                          c, c, N, inc(st, c), part, c, part, c, run, run))
    em:pragma("#pragma omp parallel for" .. sched)
    em:open(string.format("for (int %s = 1; %s < %s; %s)", c, c, N, inc(st, c)))
    bounds()
    local o = rng:pick({"o", "add", "shift"})
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
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local rb = set.register_blocking
  local U = rb and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
  local step = U * (V and V.w or 1)
  local cb
  if set.cache_blocking then
    cb = {bi = block_size(rng, rng:pick({"BI", "MB", "ROWS"}), rng:pick({32, 64, 128, 256}), sample_cb_form(rng))}
  end
  includes(em, set, pf, false, rng)
  if cb and cb.bi.top then em:line(cb.bi.top); em:line("") end
  if st.comment then em:line("/* s[j] = sum over rows of A[i][j], " .. step .. " column(s) at a time */") end
  em:open("void col_sums(int m, int n, const double *A, double *s)")
  if cb and cb.bi.decl then em:line(cb.bi.decl) end
  local t = rng:pick({"t", "sum", "c"})
  local acc = rng:pick({"acc", "vs", "col"})
  local rlo, rhi = "0", "m"
  if cb then
    em:line(string.format("for (long j = 0; j < n; %s) s[j] = 0.0;", inc(st, "j")))
    em:open(string.format("for (long ib = 0; ib < m; ib += %s)", cb.bi.name))
    em:line(string.format("const long iend = ib + %s < m ? ib + %s : m;", cb.bi.name, cb.bi.name))
    rlo, rhi = "ib", "iend"
  end
  local pfd = rng:pick({2, 4, 8})
  local function pfline(j)
    if pf then em:line(pf_stmt(pf, string.format("A + (i + %d) * n + %s", pfd, j), false)) end
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

---------------------------------------------------------------------------------------
-- transpose: an exact copy, B[j*m + i] = A[i*n + j]
---------------------------------------------------------------------------------------

local function gen_transpose(rng, set, isa)
  local st, em, pf, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local cb
  if set.cache_blocking then
    local form = sample_cb_form(rng)
    cb = {bi = block_size(rng, rng:pick({"BI", "TI", "BR"}), rng:pick({16, 32, 64}), form),
          bj = block_size(rng, rng:pick({"BJ", "TJ", "BC"}), rng:pick({16, 32, 64}), form)}
  end
  includes(em, set, pf, false, rng)
  if cb and cb.bi.top then em:line(cb.bi.top); em:line(cb.bj.top); em:line("") end
  if st.comment then em:line("/* B = A^T" .. (cb and ", tile by tile" or "") .. " */") end
  em:open("void transpose(int m, int n, const double *A, double *B)")
  if cb and cb.bi.decl then em:line(cb.bi.decl); em:line(cb.bj.decl) end
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
      if pf then em:line(pf_stmt(pf, "B + (j + " .. pfd .. ") * m + i", true)) end
    else
      em:open(string.format("for (long j = %s; j < %s; %s)", jlo, jhi, inc(st, "j")))
      em:open(string.format("for (long i = %s; i < %s; %s)", ilo, ihi, inc(st, "i")))
      if pf then em:line(pf_stmt(pf, "A + (i + " .. pfd .. ") * n + j", false)) end
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
    if pf then em:line(pf_stmt(pf, "A + (i + " .. (4 * pfd) .. ") * n + j", false)) end
    local r, t = rng:pick({"r", "row", "a"}), rng:pick({"t", "u", "p"})
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
    if pf then em:line(pf_stmt(pf, "A + (i + " .. (V.w * pfd) .. ") * n + j", false)) end
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
      local c = rng:pick({"col", "g", "cv"})
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

---------------------------------------------------------------------------------------
-- blas3: gemm_tn, gemm_batched, trmm and trsm (rows of C as sums of scaled rows of B,
-- row_update), syrk (dot products of rows of A, dot_seg)
---------------------------------------------------------------------------------------

-- The unroll of the columns: U vectors or scalars (register blocking when U > 1).
local function col_unroll(rng, set, V)
  return set.register_blocking and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
end

-- Cache blocks over the inner dimension (kb: p) and/or the columns (nb: j).
local function sample_blas3_cb(rng, set)
  if not set.cache_blocking then return nil end
  local which = rng:pick({"p", "j", "both"})
  local cb = {form = sample_cb_form(rng)}
  if which ~= "j" then cb.kb = block_size(rng, rng:pick({"KB", "KC", "PB"}), rng:pick({32, 64, 128, 256}), cb.form) end
  if which ~= "p" then cb.nb = block_size(rng, rng:pick({"NB", "BJ", "NC"}), rng:pick({32, 64, 128, 256}), cb.form) end
  return cb
end

local function blas3_tops(em, cb)
  if not cb then return end
  local any = false
  for _, b in ipairs({cb.kb or false, cb.nb or false}) do
    if b and b.top then em:line(b.top); any = true end
  end
  if any then em:line("") end
end

local function blas3_decls(em, cb)
  if not cb then return end
  for _, b in ipairs({cb.kb or false, cb.nb or false}) do
    if b and b.decl then em:line(b.decl) end
  end
end

-- for p in [lo, hi), tiled by kb (a block_size) when given; body() writes the loop's body.
local function p_loop(em, st, lo, hi, kb, body)
  if kb then
    em:open(string.format("for (long pb = %s; pb < %s; pb += %s)", lo, hi, kb.name))
    em:line(string.format("const long pend = pb + %s < %s ? pb + %s : %s;", kb.name, hi, kb.name, hi))
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
  em:open(string.format("for (long jb = 0; jb < n; jb += %s)", nb.name))
  em:line(string.format("const long jend = jb + %s < n ? jb + %s : n;", nb.name, nb.name))
  body("jb", "jend")
  em:close()
end

-- One row `c` of the product: c[lo..hi) += sum over p of coef(p) * (src row p).
local function scaled_rows(em, rng, r)
  p_loop(em, r.st, r.plo, r.phi, r.kb, function()
    em:line(string.format("const double %s = %s;", r.coef, r.coef_expr))
    em:line(string.format("const double *%s = %s + p * %s;", r.src, r.base, r.ld))
    if r.V then em:line("const " .. r.V.ty .. " v" .. r.coef .. " = " .. r.V.set1(r.coef) .. ";") end
    row_update(em, rng, {V = r.V, U = r.U, j = "j", st = r.st, lo = r.lo, hi = r.hi, dst = r.dst, src = r.src,
                         coef = r.coef, coefv = "v" .. r.coef})
  end)
end

-- gemm_tn (C = A^T B) and trmm (C = L B, p <= i): row i of C, zeroed, then the scaled rows of B.
local function gen_rows_product(rng, name, set, isa)
  local st, em, _, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local U = col_unroll(rng, set, V)
  local cb = sample_blas3_cb(rng, set)
  local tn = name == "gemm_tn"
  includes(em, set, nil, false, rng)
  blas3_tops(em, cb)
  if st.comment then
    em:line(tn and "/* C = A^T B: row i of C sums the rows of B scaled by column i of A */"
                or "/* C = L B: row i of C sums rows 0..i of B scaled by row i of L */")
  end
  em:open(etasks.get(name).prototype)
  blas3_decls(em, cb)
  local c = rng:pick({"c", "Ci", "crow"})
  local coef = rng:pick({"a", "s", "coef"})
  local src = rng:pick({"b", "Bp", "brow"})
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
  local st, em, _, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local U = col_unroll(rng, set, V)
  includes(em, set, nil, false, rng)
  if st.comment then em:line("/* C_b = A_b B_b for each product of the batch, row by row */") end
  em:open(etasks.get("gemm_batched").prototype)
  local t = rng:pick({"t", "bt", "e"})
  local names = rng:pick({{"Ab", "Bb", "Cb"}, {"a", "bb", "c"}, {"pa", "pb_", "pc"}})
  local c = rng:pick({"ci", "crow", "out"})
  local coef = rng:pick({"aip", "s", "coef"})
  local src = rng:pick({"brow", "bp", "src"})
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
  local st, em, _, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local U = col_unroll(rng, set, V)
  local cb = sample_blas3_cb(rng, set)
  local manual = set.omp and not (cb and cb.nb)
  includes(em, set, nil, false, rng)
  if manual then ensure_omp_h(em) end
  blas3_tops(em, cb)
  if st.comment then em:line("/* L X = B by forward substitution, all right-hand sides of a row at once */") end
  em:open(etasks.get("trsm").prototype)
  blas3_decls(em, cb)
  local x = rng:pick({"x", "xi", "row"})
  local coef = rng:pick({"l", "lip", "f"})
  local src = rng:pick({"xp", "prev", "xr"})
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
    local id, nt = rng:pick({"id", "tid", "me"}), rng:pick({"nt", "nth", "team"})
    em:pragma("#pragma omp parallel")
    em:line("{")
    em.depth = em.depth + 1
    em:line(string.format("const int %s = omp_get_thread_num(), %s = omp_get_num_threads();", id, nt))
    em:line(string.format("const long lo = (long)n * %s / %s, hi = (long)n * (%s + 1) / %s;", id, nt, id, nt))
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
  local st, em, _, sched = start(rng, set)
  local V = set.simd and vops(isa) or nil
  local bs
  if set.cache_blocking then
    bs = block_size(rng, rng:pick({"BS", "NB", "TILE"}), rng:pick({16, 32, 64}), sample_cb_form(rng))
  end
  local hsum = rng:pick({"hsum", "hadd", "lanes"})
  local reduce = V and isa == "avx512" and rng:chance(0.5)
  local U = set.register_blocking and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
  includes(em, set, nil, false, rng)
  if bs and bs.top then em:line(bs.top); em:line("") end
  if V and not reduce then emit_hsum(em, V, hsum) end
  if st.comment then em:line("/* C = A A^T: the lower triangle's dot products, mirrored */") end
  em:open("void syrk(int n, int k, const double *A, double *C)")
  if bs and bs.decl then em:line(bs.decl) end
  local ai, aj = rng:pick({{"ai", "aj"}, {"x", "y"}, {"ri", "rj"}})[1], nil
  aj = ai == "ai" and "aj" or (ai == "x" and "y" or "rj")
  local out = rng:pick({"s", "sum", "dotv"})
  local acc = rng:pick({"acc", "vs", "vsum"})
  local two = rng:chance(0.5)
  local function pair(jlo, jcond)
    em:open(string.format("for (long j = %s; %s; %s)", jlo, jcond, inc(st, "j")))
    em:line(string.format("const double *%s = A + j * k;", aj))
    dot_seg(em, {V = V, U = U, st = st, j = "p", p = ai, x = aj, lo = "0", hi = "k", out = out, acc = acc,
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
    em:open(string.format("for (long ib = 0; ib < n; ib += %s)", bs.name))
    em:line(string.format("const long iend = ib + %s < n ? ib + %s : n;", bs.name, bs.name))
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

---------------------------------------------------------------------------------------
-- Kernels
---------------------------------------------------------------------------------------

local generators = {
  axpy = function(rng, set, isa) return gen_axpy(rng, set, isa) end,
  gemv_n = function(rng, set, isa) return gen_gemv_n(rng, set, isa) end,
  gemv_t = function(rng, set, isa) return gen_gemv_t(rng, set, isa) end,
  ger = function(rng, set, isa) return gen_ger(rng, set, isa) end,
  symv = function(rng, set, isa) return gen_symv(rng, set, isa) end,
  trsv = function(rng, set, isa) return gen_trsv(rng, set, isa) end,
  spmv_csr = function(rng, set, isa) return gen_spmv(rng, set, isa) end,
  prefix_sum = function(rng, set, isa) return gen_prefix(rng, set, isa) end,
  col_sums = function(rng, set, isa) return gen_col_sums(rng, set, isa) end,
  transpose = function(rng, set, isa) return gen_transpose(rng, set, isa) end,
  gemm_tn = function(rng, set, isa) return gen_rows_product(rng, "gemm_tn", set, isa) end,
  trmm = function(rng, set, isa) return gen_rows_product(rng, "trmm", set, isa) end,
  gemm_batched = function(rng, set, isa) return gen_gemm_batched(rng, set, isa) end,
  syrk = function(rng, set, isa) return gen_syrk(rng, set, isa) end,
  trsm = function(rng, set, isa) return gen_trsm(rng, set, isa) end,
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
