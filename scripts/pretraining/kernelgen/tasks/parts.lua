-- The pieces of kernel text every family of kernelgen.tasks shares: the emitter, the
-- vector operations of an ISA, the sampled style (indices, schedules, prefetch, block
-- sizes, unrolls, the names of a kernel's roles), and code fragments several families use (block sizes and the loops over
-- blocks, a thread's share of a range, a dot product or an axpy over a range, a row update,
-- a horizontal sum).

local stages = require "method.stages"
local render = require "kernelgen.render"

local TECH = stages.techniques
local set_of, name = render.set_of, render.name

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

-- A name for one role in a kernel (a variable, a helper, a block size's macro): drawn from
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

-- A tile size and the lines it needs: form "define" (top), "const" (decl) or a literal.
local function sample_cb_form(rng) return rng:pick({"define", "define", "const", "literal"}) end

-- A block size drawn: its name from `names`, its size from `sizes`, in one of three forms
-- (`form`, drawn when nil): {top = #define line or nil, decl = line or nil, name = text}.
local function block_size(rng, names, sizes, form)
  local drawn = name(rng, names)
  local size = rng:pick(sizes)
  form = form or sample_cb_form(rng)
  if form == "define" then return {top = "#define " .. drawn .. " " .. size, name = drawn} end
  if form == "const" then return {decl = "const int " .. drawn .. " = " .. size .. ";", name = drawn} end
  return {name = tostring(size)}
end

-- The lines of the block sizes in use (each argument a block_size, or nil or false for
-- one not in use): block_tops writes the #defines before the function, then a blank line;
-- block_decls the const ints at the start of its body.
local function block_tops(em, ...)
  local any = false
  for k = 1, select("#", ...) do
    local b = select(k, ...)
    if b and b.top then em:line(b.top); any = true end
  end
  if any then em:line("") end
end

local function block_decls(em, ...)
  for k = 1, select("#", ...) do
    local b = select(k, ...)
    if b and b.decl then em:line(b.decl) end
  end
end

-- Opens the loop over the blocks [b, e) of [lo, hi), `size` (a block size's name) wide:
-- for (long b = lo; b < hi; b += size) { const long e = <b + size, at most hi>;
local function open_blocks(em, b, e, lo, hi, size)
  em:open(string.format("for (long %s = %s; %s < %s; %s += %s)", b, lo, b, hi, b, size))
  em:line(string.format("const long %s = %s + %s < %s ? %s + %s : %s;", e, b, size, hi, b, size, hi))
end

-- Opens a parallel region in which each thread declares its share [lo, hi) of [0, n)
-- (OpenMP's manual split); the caller closes it.
local function open_thread_share(em, rng)
  local id, nt = name(rng, {"id", "tid", "me"}), name(rng, {"nt", "nth", "team"})
  em:pragma("#pragma omp parallel")
  em:line("{")
  em.depth = em.depth + 1
  em:line(string.format("const int %s = omp_get_thread_num(), %s = omp_get_num_threads();", id, nt))
  em:line(string.format("const long lo = (long)n * %s / %s, hi = (long)n * (%s + 1) / %s;", id, nt, id, nt))
end

-- How many vectors (2 or 4) or scalars (2 to 8) a loop with register blocking does at a
-- time; 1 without it.
local function unroll(rng, set, V)
  return set.register_blocking and (V and rng:pick({2, 2, 4}) or rng:pick({2, 4, 4, 8})) or 1
end


local function ix(i, k) return k == 0 and i or (i .. " + " .. k) end

-- A sum of terms as a balanced tree of f(a, b) or a + b.
local function tree(terms, f)
  if #terms == 1 then return terms[1] end
  local mid = #terms // 2
  local a = tree({table.unpack(terms, 1, mid)}, f)
  local b = tree({table.unpack(terms, mid + 1)}, f)
  return f(a, b)
end

-- What a kernel sets up first: its style and emitter, prefetch and schedule when its
-- techniques have them, and the ISA's vector operations when it uses SIMD.
local function start(rng, set, isa)
  local st = sample_style(rng)
  local em = emitter(st.indent)
  em.pragma_indent = st.pragma_indent
  return st, em, set.prefetch and sample_pf(rng) or nil, set.omp and sample_sched(rng) or "",
         set.simd and vops(isa) or nil
end

-- dst[j..] += src[j..] * coefv (c's fields) in vectors: one (U == 1), or U of them loaded
-- into the registers pre0, pre1, ..., updated, then stored back.
local function vector_update(em, c, j, U, pre)
  local V = c.V
  if U == 1 then
    em:line(V.st(c.dst .. " + " .. j, V.fma(V.ld(c.src .. " + " .. j), c.coefv, V.ld(c.dst .. " + " .. j))))
    return
  end
  for u = 0, U - 1 do em:line(V.ty .. " " .. pre .. u .. " = " .. V.ld(c.dst .. " + " .. ix(j, u * V.w)) .. ";") end
  for u = 0, U - 1 do
    em:line(pre .. u .. " = " .. V.fma(V.ld(c.src .. " + " .. ix(j, u * V.w)), c.coefv, pre .. u) .. ";")
  end
  for u = 0, U - 1 do em:line(V.st(c.dst .. " + " .. ix(j, u * V.w), pre .. u)) end
end

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
  else
    vector_update(em, c, j, U, U > 1 and name(rng, {"r", "vd", "cv"}) or nil)
  end
  em:close()
  em:line(string.format("for (; %s < %s; %s) %s", j, c.hi, inc(st, j), scalar(j)))
end

-- How a kernel sums a vector's lanes: the name of its emit_hsum helper (one of `names`), and
-- whether it calls AVX-512's reduction instead (half the time on AVX-512, never without SIMD).
local function sample_hsum(rng, V, isa, names)
  local helper = name(rng, names or {"hsum", "hadd", "lanes"})
  return helper, V and isa == "avx512" and rng:chance(0.5)
end

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
  else
    vector_update(em, c, j, U, c.pre)
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

-- A kernel's head, in the one order every generator writes it: the includes (omp.h too where
-- h.omp_h, a manual split, needs it), the block sizes' #defines, the horizontal sum's helper
-- when h.V and h.hsum are given and not h.reduce, the comment (h.comment: nil or false when
-- the style has none), the function opened on h.signature, the block sizes' const ints.
-- The block sizes follow `h` (block_size tables, or nil or false for one not in use).
local function head(em, rng, set, h, ...)
  includes(em, set, h.pf, h.math, rng)
  if h.omp_h then ensure_omp_h(em) end
  block_tops(em, ...)
  if h.V and h.hsum and not h.reduce then emit_hsum(em, h.V, h.hsum) end
  if h.comment then em:line(h.comment) end
  em:open(h.signature)
  block_decls(em, ...)
end

return {TECH = TECH, set_of = set_of, VEC = VEC, Em = Em, emitter = emitter, vops = vops,
        sample_style = sample_style, inc = inc, sample_sched = sample_sched, sample_pf = sample_pf,
        pf_stmt = pf_stmt, includes = includes, block_size = block_size, block_tops = block_tops,
        block_decls = block_decls, open_blocks = open_blocks, open_thread_share = open_thread_share,
        unroll = unroll, ix = ix, tree = tree, start = start, sample_cb_form = sample_cb_form,
        row_update = row_update, sample_hsum = sample_hsum, emit_hsum = emit_hsum, dot_seg = dot_seg,
        axpy_seg = axpy_seg, ensure_omp_h = ensure_omp_h, head = head, name = name}
