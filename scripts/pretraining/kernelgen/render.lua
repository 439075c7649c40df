-- The text of a synthetic kernel (kernelgen's renderer): a pure function of the kernel's
-- params and, optionally, one defect placed at one of its sites.
--
-- params (made by kernelgen's samplers):
--   tech    {technique = true} for the techniques used
--   micro   the micro-kernel: kind "scalar" (order "ijk".."kji"), "stile" (mr x nr scalar
--           accumulators), "unroll_k" / "unroll_j" (u), "vrow" / "vikj" (isa, tail
--           "mask"|"scalar"), "vtile" (isa, mr rows x nv vectors, tail); isa "avx512" |
--           "avx2", fma (false: multiply then add)
--   cb      cache blocking: bi, bj, bk (nil: that loop is not blocked), order of the block
--           loops ("ijk", "ikj", "jik", "kij" restricted to the blocked ones), form
--           "define" | "const" | "literal"
--   omp     style "for" | "collapse" | "manual", schedule, chunk, zero_par
--   pf      fn "mm" | "builtin", target "A" | "B", dist, hint "T0" | "T1"
--   c_mode  "direct" (C written once from sums) | "accumulate" (C zeroed, then added to);
--           k blocking and the ikj-like orders always accumulate
--   zero    "memset" | "loop" | "rows" (each thread its rows, with the manual split)
--   style   indentation, names, comment, MIN macro or ternary, how zero is written
-- Every loop that steps by a tile has its remainder; tiled loops start at their block's
-- variable, so the pattern detector (stages.lua) sees the blocking; OpenMP loops are in
-- canonical form.
--
--   local render = require "kernelgen.render"
--   local lines, em = render.lines(params, nil)           -- em.count[defect]: its sites
--   local lines = render.lines(params, {name = "race", site = 2})
-- One file over 600 lines: every defect site is placed in the text the same pass
-- writes, so the renderer and its sites cannot be read apart.

local render = {}

-- {x = true} for each x of list (nil: none).
function render.set_of(list)
  local s = {}
  for _, x in ipairs(list or {}) do s[x] = true end
  return s
end

-- `choices`, or the first of them where the kernel's rng says names = "fixed" (the draw is
-- made either way, so the kernel's other draws stay as they were). A small model copies a
-- drawn name badly from its definition to its uses; one name a role leaves nothing to copy.
function render.name(rng, choices)
  local drawn = rng:pick(choices)
  if rng.names == "fixed" then return choices[1] end
  return drawn
end

render.ISA = {
  avx512 = {w = 8, ty = "__m512d", p = "_mm512", vec = "__vector(8) double"},
  avx2 = {w = 4, ty = "__m256d", p = "_mm256", vec = "__vector(4) double"},
}

render.name_sets = {
  blk = {{"ii", "jj", "kk"}, {"ib", "jb", "kb"}, {"i0", "j0", "k0"}, {"bi", "bj", "bk"}},
  ends = {{"iend", "jend", "kend"}, {"imax", "jmax", "kmax"}, {"ie", "je", "ke"},
          {"i_end", "j_end", "k_end"}},
  bsz = {{"BI", "BJ", "BK"}, {"MB", "NB", "KB"}, {"BLOCK_M", "BLOCK_N", "BLOCK_K"},
         {"TILE_I", "TILE_J", "TILE_K"}},
  sum = {"sum", "s", "acc", "t", "dot"},
  tile = {"c", "acc", "r"},
  vacc = {"c", "vc", "acc"},
  va = {"a", "va", "av"},
  vb = {"b", "vb", "bv"},
  lim = {{"mt", "nt", "kt"}, {"m_main", "n_main", "k_main"}, {"mfull", "nfull", "kfull"},
         {"i_lim", "j_lim", "k_lim"}},
  split = {{"tid", "nth", "chunk", "lo", "hi"}, {"id", "nthreads", "rows", "start", "stop"},
           {"me", "team", "per", "first", "last"}},
}

local ISA, name_sets = render.ISA, render.name_sets

---------------------------------------------------------------------------------------
-- Rendering: a line emitter that knows the loop nest, the OpenMP construct it is in, and
-- the places a defect may go (sites, counted in a first pass, one chosen in a second).
---------------------------------------------------------------------------------------

local Em = {}
Em.__index = Em

local function emitter(p, defect)
  return setmetatable({p = p, lines = {}, ind = 0, unit = p.style.indent, count = {},
                       defect = defect, loops = {}, fresh_used = {}, info = {}}, Em)
end

function Em:add(s) self.lines[#self.lines + 1] = (" "):rep(self.ind * self.unit) .. s end
function Em:raw(s) self.lines[#self.lines + 1] = s end

-- Is this occurrence of a `kind` site the one the defect goes to?
function Em:site(kind, detail)
  self.count[kind] = (self.count[kind] or 0) + 1
  local d = self.defect
  if d and d.name == kind and d.site == self.count[kind] then
    self.info.detail = detail
    return true
  end
  return false
end

function Em:fresh(base)
  local n = (self.fresh_used[base] or 0) + 1
  self.fresh_used[base] = n
  return n == 1 and base or (base .. n)
end

-- Marks the start of a loop nest: under OpenMP "for"/"collapse" outside any parallel
-- construct, its first loop over i or j gets the pragma.
function Em:nest() self.nest_open = self.omp_for ~= nil and not self.in_par end

-- Opens `for (header) {` over dimension dim ("i", "j", "k"). collapsible: the next
-- statement is a rectangular loop over i or j, so collapse(2) may join them.
function Em:loop(dim, header, collapsible)
  if self.nest_open and dim ~= "k" then
    local clause = self.omp_for
    if self.accumulates and self:site("race_for", "for") then
      -- `for` forgotten: every thread runs every iteration, all adding into the same C
      clause = "#pragma omp parallel"
    elseif collapsible and self.omp_style == "collapse" then
      clause = clause:gsub("parallel for", "parallel for collapse(2)")
      self.info.collapse = true
    end
    self:add(clause)
    self.par_line, self.in_par, self.par_level, self.nest_open = #self.lines, true, self.ind, false
    self.par_kind = "loop"
  end
  self:add("for (" .. header .. ") {")
  self.loops[#self.loops + 1] = #self.lines
  self.ind = self.ind + 1
end

function Em:close()
  self.ind = self.ind - 1
  self:add("}")
  self.loops[#self.loops] = nil
  if self.in_par and self.par_kind == "loop" and self.ind == self.par_level then
    self.in_par = false
  end
end

-- A plain block (not a loop): `if (...) {`.
function Em:block(header)
  self:add(header .. " {")
  self.loops[#self.loops + 1] = #self.lines
  self.ind = self.ind + 1
end

local function indent_of(line) return line:match("^(%s*)") end

function Em:insert(at, text)
  table.insert(self.lines, at, indent_of(self.lines[at]) .. text)
end

-- A declaration `ty n1 = v1, n2 = v2;`. stale: it may be the stale-accumulator defect
-- (the sums start at zero once, before the loop they belong to); inside a parallel
-- construct it may be the race defect (declared before the construct: shared).
function Em:decl(ty, names, inits, stale_dim)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = n .. " = " .. inits[i] end
  if stale_dim and self:site("stale_accumulator", stale_dim) then
    local at = self.loops[#self.loops]
    if at > 1 and self.lines[at - 1]:match("^%s*#%s*pragma") then at = at - 1 end
    self:insert(at, ty .. " " .. table.concat(parts, ", ") .. ";")
    return
  end
  if self.in_par and self:site("race", "shared") then
    self:insert(self.par_line, ty .. " " .. table.concat(names, ", ") .. ";")
    for i, n in ipairs(names) do self:add(n .. " = " .. inits[i] .. ";") end
    return
  end
  self:add(ty .. " " .. table.concat(parts, ", ") .. ";")
end

-- The comparison of a k loop against its end (the off-by-one defect).
function Em:klt() return self:site("off_by_one", "k") and "<=" or "<" end
-- A tail loop: false when the missing-remainder defect drops it.
function Em:tail(dim) return not self:site("missing_remainder", dim) end
-- The increment of a tail loop (the endless-loop defect drops it).
function Em:inc(var) return self:site("endless_loop") and "" or (var .. "++") end

-- Software prefetch at the top of a k-loop body: row i of A ahead, or row k + d of B.
function Em:prefetch(i, j)
  local pf = self.p.pf
  if not pf then return end
  local target = pf.target
  if target == "A" and not i then target = "B" end
  local addr
  if target == "A" then
    addr = string.format("&A[%s * K + k + %d]", i, pf.dist)
  else
    local col = (j and j ~= "0") and (" + " .. j) or ""
    addr = string.format("&B[(k + %d) * N%s]", pf.dist, col)
  end
  if pf.fn == "mm" then
    self:add(string.format("_mm_prefetch((const char *)%s, _MM_HINT_%s);", addr, pf.hint))
  else
    self:add(string.format("__builtin_prefetch(%s, 0, %d);", addr, pf.hint == "T0" and 3 or 2))
  end
end

-- Index expressions.
local function row(i, r) return r == 0 and i or ("(" .. i .. " + " .. r .. ")") end
local function plus(j, c) return c == 0 and j or (j .. " + " .. c) end
local function Aix(i, k) return string.format("A[%s * K + %s]", i, k) end
local function Bix(k, j) return string.format("B[%s * N + %s]", k, j) end
local function Cix(i, j) return string.format("C[%s * N + %s]", i, j) end

-- R: the region {i0, i1, j0, j1, k0, k1, acc}; acc: C already holds a partial sum.

-- A plain dot-product strip: rows [ia, ib) x columns [ja, jb), scalar (remainders).
-- Row i's C[i][ja..jb) as scalar dot products over the k block, in the sum `s`.
local function scalar_dots(e, R, s, ja, jb)
  e:loop("j", string.format("int j = %s; j < %s; %s", ja, jb, e:inc("j")))
  e:decl("double", {s}, {e.zero})
  e:loop("k", string.format("int k = %s; k < %s; k++", R.k0, R.k1))
  e:add(string.format("%s += %s * %s;", s, Aix("i", "k"), Bix("k", "j")))
  e:close()
  e:add(string.format("%s %s %s;", Cix("i", "j"), R.acc and "+=" or "=", s))
  e:close()
end

local function scalar_strip(e, R, ia, ib, ja, jb, tail_dim)
  if not e:tail(tail_dim) then return end
  local s = e.p.style.sum
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i++", ia, ib), true)
  scalar_dots(e, R, s, ja, jb)
  e:close()
end

local micro = {}

function micro.scalar(e, R)
  local m, st = e.p.micro, e.p.style
  local o = m.order
  local range = {i = {R.i0, R.i1}, j = {R.j0, R.j1}, k = {R.k0, R.k1}}
  local s = st.sum
  local function open(pos, collapsible)
    local d = o:sub(pos, pos)
    local lt = d == "k" and e:klt() or "<"
    e:loop(d, string.format("int %s = %s; %s %s %s; %s++", d, range[d][1], d, lt, range[d][2], d),
           collapsible)
  end
  e:nest()
  if o:sub(3, 3) == "k" then            -- ijk, jik: a dot product per element of C
    open(1, true)
    open(2)
    e:decl("double", {s}, {e.zero}, not R.acc and o:sub(2, 2) or nil)
    open(3)
    e:prefetch("i", "j")
    e:add(string.format("%s += %s * %s;", s, Aix("i", "k"), Bix("k", "j")))
    e:close()
    e:add(string.format("%s %s %s;", Cix("i", "j"), R.acc and "+=" or "=", s))
  else
    -- k is not innermost: the operand that stays fixed in the inner loop is hoisted
    local inner = o:sub(3, 3)
    open(1)
    if o:sub(1, 1) == "k" then e:prefetch(nil, R.j0) end
    open(2)
    if inner == "j" then e:decl("double", {"a"}, {Aix("i", "k")})
    else e:decl("double", {"b"}, {Bix("k", "j")}) end
    if o:sub(2, 2) == "k" then e:prefetch(o:sub(1, 1) == "i" and "i" or nil, o:sub(1, 1) == "j" and "j" or R.j0) end
    open(3)
    if inner == "j" then e:add(string.format("%s += a * %s;", Cix("i", "j"), Bix("k", "j")))
    else e:add(string.format("%s += %s * b;", Cix("i", "j"), Aix("i", "k"))) end
    e:close()
  end
  e:close()
  e:close()
end

-- Whether a micro-kernel adds into C whatever R.acc says (C must be zeroed first).
function render.always_accumulates(m)
  return (m.kind == "scalar" and m.order:sub(3, 3) ~= "k") or m.kind == "unroll_j"
    or m.kind == "vikj"
end

-- The end of the whole tiles: i0 + (i1 - i0) / t * t.
local function tile_end(i0, i1, t)
  if i0 == "0" then return string.format("%s / %d * %d", i1, t, t) end
  return string.format("%s + (%s - %s) / %d * %d", i0, i1, i0, t, t)
end

-- Declares that end of [lo, hi) in tiles of t, under a fresh name from `base`; returns the name.
local function tile_limit(e, base, lo, hi, t)
  local name = e:fresh(base)
  e:add(string.format("int %s = %s;", name, tile_end(lo, hi, t)))
  return name
end

function micro.stile(e, R)
  local m, st = e.p.micro, e.p.style
  local lim = name_sets.lim[st.lim]
  local mt = tile_limit(e, lim[1], R.i0, R.i1, m.mr)
  local nt = tile_limit(e, lim[2], R.j0, R.j1, m.nr)
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i += %d", R.i0, mt, m.mr), true)
  e:loop("j", string.format("int j = %s; j < %s; j += %d", R.j0, nt, m.nr))
  local accs, zeros = {}, {}
  for r = 0, m.mr - 1 do
    for c = 0, m.nr - 1 do accs[#accs + 1] = st.tile .. r .. c; zeros[#zeros + 1] = e.zero end
  end
  e:decl("double", accs, zeros)
  e:loop("k", string.format("int k = %s; k %s %s; k++", R.k0, e:klt(), R.k1))
  e:prefetch("i", "j")
  local an, av, bn, bv = {}, {}, {}, {}
  for r = 0, m.mr - 1 do an[#an + 1] = "a" .. r; av[#av + 1] = Aix(row("i", r), "k") end
  for c = 0, m.nr - 1 do bn[#bn + 1] = "b" .. c; bv[#bv + 1] = Bix("k", plus("j", c)) end
  e:decl("double", an, av)
  e:decl("double", bn, bv)
  for r = 0, m.mr - 1 do
    local parts = {}
    for c = 0, m.nr - 1 do parts[#parts + 1] = string.format("%s%d%d += a%d * b%d;", st.tile, r, c, r, c) end
    e:add(table.concat(parts, " "))
  end
  e:close()
  for r = 0, m.mr - 1 do
    local parts = {}
    for c = 0, m.nr - 1 do
      parts[#parts + 1] = string.format("%s %s %s%d%d;", Cix(row("i", r), plus("j", c)),
                                        R.acc and "+=" or "=", st.tile, r, c)
    end
    e:add(table.concat(parts, " "))
  end
  e:close()
  e:close()
  scalar_strip(e, R, R.i0, mt, nt, R.j1, "j")
  scalar_strip(e, R, mt, R.i1, R.j0, R.j1, "i")
end

function micro.unroll_k(e, R)
  local m, st = e.p.micro, e.p.style
  local kt = tile_limit(e, name_sets.lim[st.lim][3], R.k0, R.k1, m.u)
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i++", R.i0, R.i1), true)
  e:loop("j", string.format("int j = %s; j < %s; j++", R.j0, R.j1))
  local names, zeros = {}, {}
  for u = 0, m.u - 1 do names[#names + 1] = st.sum .. u; zeros[#zeros + 1] = e.zero end
  e:decl("double", names, zeros, not R.acc and "j" or nil)
  e:loop("k", string.format("int k = %s; k < %s; k += %d", R.k0, kt, m.u))
  e:prefetch("i", "j")
  for u = 0, m.u - 1 do
    e:add(string.format("%s%d += %s * %s;", st.sum, u, Aix("i", plus("k", u)),
                        Bix(u == 0 and "k" or ("(k + " .. u .. ")"), "j")))
  end
  e:close()
  if e:tail("k") then
    e:loop("k", string.format("int k = %s; k %s %s; %s", kt, e:klt(), R.k1, e:inc("k")))
    e:add(string.format("%s0 += %s * %s;", st.sum, Aix("i", "k"), Bix("k", "j")))
    e:close()
  end
  local total = {}
  for u = 0, m.u - 1 do total[#total + 1] = st.sum .. u end
  e:add(string.format("%s %s %s;", Cix("i", "j"), R.acc and "+=" or "=", table.concat(total, " + ")))
  e:close()
  e:close()
end

function micro.unroll_j(e, R)
  local m, st = e.p.micro, e.p.style
  local nt = tile_limit(e, name_sets.lim[st.lim][2], R.j0, R.j1, m.u)
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i++", R.i0, R.i1))
  e:loop("k", string.format("int k = %s; k %s %s; k++", R.k0, e:klt(), R.k1))
  e:decl("double", {"a"}, {Aix("i", "k")})
  e:prefetch("i", R.j0)
  e:loop("j", string.format("int j = %s; j < %s; j += %d", R.j0, nt, m.u))
  for u = 0, m.u - 1 do
    e:add(string.format("%s += a * %s;", Cix("i", plus("j", u)), Bix("k", plus("j", u))))
  end
  e:close()
  if e:tail("j") then
    e:loop("j", string.format("int j = %s; j < %s; %s", nt, R.j1, e:inc("j")))
    e:add(string.format("%s += a * %s;", Cix("i", "j"), Bix("k", "j")))
    e:close()
  end
  e:close()
  e:close()
end

local function intr(isa, op) return ISA[isa].p .. "_" .. op end

-- c = c + a * b, as one FMA or a multiply and an add.
local function fma_expr(m, a, b, c)
  if m.fma ~= false then return string.format("%s(%s, %s, %s)", intr(m.isa, "fmadd_pd"), a, b, c) end
  return string.format("%s(%s, %s(%s, %s))", intr(m.isa, "add_pd"), c, intr(m.isa, "mul_pd"), a, b)
end

local function mask_expr(j1, j) return string.format("(__mmask8)((1 << (%s - %s)) - 1)", j1, j) end

-- One row at a time: a vector accumulator per W columns, then the tail (masked or
-- scalar). Rows [ia, ib), columns [ja, jb).
local function vrow_rows(e, R, ia, ib, ja, jb, main)
  local m, st = e.p.micro, e.p.style
  local isa = ISA[m.isa]
  local c = st.vacc
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i++", ia, ib))
  local nv = tile_limit(e, "jv", ja, jb, isa.w)
  e:loop("j", string.format("int j = %s; j < %s; j += %d", ja, nv, isa.w))
  e:decl(isa.ty, {c}, {R.acc and string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Cix("i", "j"))
                          or (intr(m.isa, "setzero_pd") .. "()")},
         (main and not R.acc) and "j" or nil)
  e:loop("k", string.format("int k = %s; k %s %s; k++", R.k0, main and e:klt() or "<", R.k1))
  if main then e:prefetch("i", "j") end
  e:add(string.format("%s = %s;", c, fma_expr(m, string.format("%s(%s)", intr(m.isa, "set1_pd"), Aix("i", "k")),
                                              string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Bix("k", "j")), c)))
  e:close()
  e:add(string.format("%s(&%s, %s);", intr(m.isa, "storeu_pd"), Cix("i", "j"), c))
  e:close()
  if e:tail("j") then
    if m.tail == "mask" then
      e:block(string.format("if (%s < %s)", nv, jb))
      e:add(string.format("__mmask8 m = %s;", mask_expr(jb, nv)))
      e:decl(isa.ty, {c}, {R.acc and string.format("_mm512_maskz_loadu_pd(m, &%s)", Cix("i", nv))
                              or "_mm512_setzero_pd()"})
      e:loop("k", string.format("int k = %s; k < %s; k++", R.k0, R.k1))
      e:add(string.format("%s = %s;", c, fma_expr(m, string.format("_mm512_set1_pd(%s)", Aix("i", "k")),
                                                  string.format("_mm512_maskz_loadu_pd(m, &%s)", Bix("k", nv)), c)))
      e:close()
      e:add(string.format("_mm512_mask_storeu_pd(&%s, m, %s);", Cix("i", nv), c))
      e:close()
    else
      local s = st.sum
      scalar_dots(e, R, s, nv, jb)
    end
  end
  e:close()
end

function micro.vrow(e, R) vrow_rows(e, R, R.i0, R.i1, R.j0, R.j1, true) end

function micro.vikj(e, R)
  local m, st = e.p.micro, e.p.style
  local isa = ISA[m.isa]
  local c, a = st.vacc, st.va
  if a == c then a = "va" end
  local nv = tile_limit(e, "jv", R.j0, R.j1, isa.w)
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i++", R.i0, R.i1))
  e:loop("k", string.format("int k = %s; k %s %s; k++", R.k0, e:klt(), R.k1))
  e:decl(isa.ty, {a}, {string.format("%s(%s)", intr(m.isa, "set1_pd"), Aix("i", "k"))})
  e:prefetch("i", R.j0)
  e:loop("j", string.format("int j = %s; j < %s; j += %d", R.j0, nv, isa.w))
  e:decl(isa.ty, {c}, {string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Cix("i", "j"))})
  e:add(string.format("%s = %s;", c, fma_expr(m, a, string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Bix("k", "j")), c)))
  e:add(string.format("%s(&%s, %s);", intr(m.isa, "storeu_pd"), Cix("i", "j"), c))
  e:close()
  if e:tail("j") then
    if m.tail == "mask" then
      e:block(string.format("if (%s < %s)", nv, R.j1))
      e:add(string.format("__mmask8 m = %s;", mask_expr(R.j1, nv)))
      e:decl(isa.ty, {c}, {string.format("_mm512_maskz_loadu_pd(m, &%s)", Cix("i", nv))})
      e:add(string.format("%s = %s;", c, fma_expr(m, a, string.format("_mm512_maskz_loadu_pd(m, &%s)", Bix("k", nv)), c)))
      e:add(string.format("_mm512_mask_storeu_pd(&%s, m, %s);", Cix("i", nv), c))
      e:close()
    else
      e:loop("j", string.format("int j = %s; j < %s; %s", nv, R.j1, e:inc("j")))
      e:add(string.format("%s += %s * %s;", Cix("i", "j"), Aix("i", "k"), Bix("k", "j")))
      e:close()
    end
  end
  e:close()
  e:close()
end

function micro.vtile(e, R)
  local m, st = e.p.micro, e.p.style
  local isa = ISA[m.isa]
  local w, width = isa.w, isa.w * m.nv
  local lim = name_sets.lim[st.lim]
  local mt = tile_limit(e, lim[1], R.i0, R.i1, m.mr)
  local nt = tile_limit(e, lim[2], R.j0, R.j1, width)
  e:nest()
  e:loop("i", string.format("int i = %s; i < %s; i += %d", R.i0, mt, m.mr), true)
  e:loop("j", string.format("int j = %s; j < %s; j += %d", R.j0, nt, width))
  for r = 0, m.mr - 1 do
    local names, inits = {}, {}
    for v = 0, m.nv - 1 do
      names[#names + 1] = st.tile .. r .. v
      inits[#inits + 1] = R.acc and string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Cix(row("i", r), plus("j", v * w)))
                          or (intr(m.isa, "setzero_pd") .. "()")
    end
    e:decl(isa.ty, names, inits)
  end
  e:loop("k", string.format("int k = %s; k %s %s; k++", R.k0, e:klt(), R.k1))
  e:prefetch("i", "j")
  local bn, bv = {}, {}
  for v = 0, m.nv - 1 do
    bn[#bn + 1] = st.vb .. v
    bv[#bv + 1] = string.format("%s(&%s)", intr(m.isa, "loadu_pd"), Bix("k", plus("j", v * w)))
  end
  e:decl(isa.ty, bn, bv)
  local a = st.va
  for r = 0, m.mr - 1 do
    local load = string.format("%s(%s)", intr(m.isa, "set1_pd"), Aix(row("i", r), "k"))
    if r == 0 then e:decl(isa.ty, {a}, {load}) else e:add(a .. " = " .. load .. ";") end
    for v = 0, m.nv - 1 do
      local acc = st.tile .. r .. v
      e:add(string.format("%s = %s;", acc, fma_expr(m, a, st.vb .. v, acc)))
    end
  end
  e:close()
  for r = 0, m.mr - 1 do
    local parts = {}
    for v = 0, m.nv - 1 do
      parts[#parts + 1] = string.format("%s(&%s, %s%d%d);", intr(m.isa, "storeu_pd"),
                                        Cix(row("i", r), plus("j", v * w)), st.tile, r, v)
    end
    e:add(table.concat(parts, " "))
  end
  e:close()
  e:close()
  -- the columns right of the tiles, then the rows below them
  if e:tail("j") then vrow_rows(e, R, R.i0, mt, nt, R.j1, false) end
  if e:tail("i") then vrow_rows(e, R, mt, R.i1, R.j0, R.j1, false) end
end

local comments = {
  "/* C = A * B for row-major matrices. */",
  "// C (M x N) = A (M x K) * B (K x N), all row-major",
  "/* Matrix multiplication kernel. */",
}

local function min_expr(p, a, b)
  if p.style.minfn == "macro" then return string.format("MIN(%s, %s)", a, b) end
  return string.format("%s < %s ? %s : %s", a, b, a, b)
end

-- The whole kernel: returns the lines and what the render found out.
function render.lines(p, defect)
  local e = emitter(p, defect)
  local st, cb, omp = p.style, p.cb, p.omp
  local m = p.micro
  e.zero = st.zero_float
  local acc = (cb and cb.bk ~= nil) or p.c_mode == "accumulate"
  local needs_zero = acc or render.always_accumulates(m)
  e.accumulates = needs_zero  -- then every nest adds into C
  local zero = p.zero
  if zero == "rows" and not (omp and omp.style == "manual") then zero = "loop" end

  -- headers and macros
  if st.comment > 0 then e:raw(comments[st.comment]) end
  if p.tech.simd or (p.pf and p.pf.fn == "mm") then e:raw("#include <immintrin.h>") end
  if omp and (omp.style == "manual" or st.indent == 4) then e:raw("#include <omp.h>") end
  if needs_zero and (zero == "memset" or zero == "rows") then e:raw("#include <string.h>") end
  local bsz = name_sets.bsz[st.bsz]
  local size = {}
  if cb then
    for idx, d in ipairs({"i", "j", "k"}) do
      local v = cb["b" .. d]
      if v then
        if cb.form == "literal" then size[d] = tostring(v)
        else
          size[d] = bsz[idx]
          if cb.form == "define" then e:raw(string.format("#define %s %d", bsz[idx], v)) end
        end
      end
    end
    if st.minfn == "macro" then e:raw("#define MIN(a, b) ((a) < (b) ? (a) : (b))") end
  end
  if #e.lines > 0 then e:raw("") end
  e:raw("void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {")
  e.ind = 1
  if cb and cb.form == "const" then
    for idx, d in ipairs({"i", "j", "k"}) do
      if cb["b" .. d] then e:add(string.format("const int %s = %d;", bsz[idx], cb["b" .. d])) end
    end
  end

  local function clause()
    local c = "#pragma omp parallel for"
    if omp.schedule then
      c = c .. " schedule(" .. omp.schedule .. (omp.chunk and (", " .. omp.chunk) or "") .. ")"
    end
    return c
  end

  -- zeroing C before accumulating
  local function zero_all()
    if not e:site("missing_c_init") then
      if zero == "memset" then
        e:add("memset(C, 0, (size_t)M * N * sizeof(double));")
      else
        if omp and omp.zero_par and omp.style ~= "manual" then e:add("#pragma omp parallel for") end
        e:add(string.format("for (int i = 0; i < M * N; i++) C[i] = %s;", e.zero))
      end
    end
  end
  if needs_zero and zero ~= "rows" then zero_all() end

  local I0, I1 = "0", "M"
  if omp and omp.style == "manual" then
    local n = name_sets.split[st.split]
    e:add("#pragma omp parallel")
    e.par_line, e.in_par, e.par_kind = #e.lines, true, "region"
    e:add("{")
    e.loops[#e.loops + 1] = #e.lines
    e.ind = e.ind + 1
    e:add(string.format("int %s = omp_get_thread_num();", n[1]))
    e:add(string.format("int %s = omp_get_num_threads();", n[2]))
    e:add(string.format("int %s = (M + %s - 1) / %s;", n[3], n[2], n[2]))
    e:add(string.format("int %s = %s * %s < M ? %s * %s : M;", n[4], n[1], n[3], n[1], n[3]))
    e:add(string.format("int %s = %s + %s < M ? %s + %s : M;", n[5], n[4], n[3], n[4], n[3]))
    I0, I1 = n[4], n[5]
    if needs_zero and zero == "rows" and not e:site("missing_c_init") then
      e:add(string.format("memset(&C[(size_t)%s * N], 0, (size_t)(%s - %s) * N * sizeof(double));", I0, I1, I0))
      e.info.rows_memset = true
    end
  elseif omp then
    e.omp_for, e.omp_style = clause(), omp.style
  end

  local R = {i0 = I0, i1 = I1, j0 = "0", j1 = "N", k0 = "0", k1 = "K", acc = acc}
  if cb then
    local blk = name_sets.blk[st.blk]
    local ends = name_sets.ends[st.ends]
    local idx = {i = 1, j = 2, k = 3}
    local lo = {i = I0, j = "0", k = "0"}
    local hi = {i = I1, j = "N", k = "K"}
    e:nest()
    local order = cb.order
    for pos = 1, #order do
      local d = order:sub(pos, pos)
      local b = blk[idx[d]]
      local nxt = order:sub(pos + 1, pos + 1)
      e:loop(d, string.format("int %s = %s; %s < %s; %s += %s", b, lo[d], b, hi[d], b, size[d]),
             nxt ~= "" and nxt ~= "k" and d ~= "k")
    end
    for pos = 1, #order do
      local d = order:sub(pos, pos)
      local b = blk[idx[d]]
      e:add(string.format("int %s = %s;", ends[idx[d]], min_expr(p, b .. " + " .. size[d], hi[d])))
      R[d .. "0"], R[d .. "1"] = b, ends[idx[d]]
    end
    micro[m.kind](e, R)
    for _ = 1, #order do e:close() end
  else
    micro[m.kind](e, R)
  end
  if omp and omp.style == "manual" then
    e.ind = e.ind - 1
    e:add("}")
  end
  e.ind = 0
  e:add("}")
  e.info.needs_zero, e.info.acc = needs_zero, acc
  return e.lines, e
end

return render
