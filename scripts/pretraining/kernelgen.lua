-- Synthetic matmul kernels: a generator of C kernels in the task's signature that compose
-- the techniques of Table I, with a controlled share of realistic defects, and the chat
-- examples (prompt + answer) that teach a model to write them. A pretraining corpus for
-- a small policy, and a source of slow/fast and broken/fixed pairs for anyone's SFT.
--
--   local kernelgen = require "kernelgen"
--   local rng = kernelgen.rng(42)                      -- deterministic, independent of math.random
--   local k = kernelgen.kernel(rng, {allowed = {"register_blocking", "simd"},
--                                    require = {"simd"}, defect = nil})
--   k.code, k.techniques, k.combo, k.params, k.lines
--   local broken = kernelgen.kernel(rng, {params = k.params, defect = "random"})
--   broken.defect, broken.expect (statuses), broken.correct_code, broken.compile_message
--   kernelgen.message(rng, broken, task)   -- the engine-shaped error for a repair prompt
--   local ex = kernelgen.example(rng, {kind = "repair", stage = 4, task = {M = 256, N = 256, K = 256}})
--   ex.messages, ex.completion, ex.kind, ex.stage, ex.techniques, ex.defect, ex.input, ex.task
--   local list = kernelgen.corpus(1000, {seed = 1, defect_rate = 0.15})
--   kernelgen.stats(list)        -- {n, combos, technique_sets, top_text_share, defects, ...}
--
-- kernel(rng, opts): opts.allowed (techniques, default all five), opts.require (must be
-- used), opts.defect (nil/false: correct; a name of kernelgen.defects; "random": one the
-- kernel has room for), opts.params (render these instead of sampling: the same kernel
-- with or without a defect), opts.fixed (lean toward all five and AVX-512), opts.isa
-- ("avx512" or "avx2": the intrinsics of a SIMD kernel; nil: either). `techniques`
-- is in Table I order (stages.techniques); `combo` is a key of the techniques and the
-- parameters that shape the code (micro-kernel, tile, blocks, OpenMP style, prefetch).
--
-- example(rng, opts): opts.kind, opts.stage (the prompt's stage; for "advance" the stage
-- it starts from: ex.stage is then s + 1, the stage the answer satisfies), opts.task
-- (default kernelgen.task(rng): sizes 64..1024, mostly square, -O0..-O3, some thread
-- counts), opts.defect_rate (0.15), opts.defect (the input's defect for "repair"),
-- opts.isa (the vector ISA the prompt names, task.isa: "avx512", the default and the
-- paper's, or "avx2"; the answer uses that ISA's intrinsics or none, never wider ones),
-- opts.version (of the drawn sizes: kernelgen.corpus_version). An example that would hold
-- an item of the held-out split (heldout_split.lua: a held-out size, wording, prompt or
-- task) is refused with the item named, unless opts.check is false (audit.lua's rebuilds).
-- corpus(n, opts): opts.seed (1), opts.mix ({kind = share}, default kernelgen.default_mix:
-- fixed 0.35, write 0.3, improve 0.15, advance 0.1, repair 0.1), opts.write_stage6 (share
-- of "write" examples at stage 6, 0.4; the rest over stages 1-5), opts.defect_rate,
-- opts.task (a function(rng) -> task, to fix the sizes), opts.isa (an ISA for every
-- example, or {isa = share}; default kernelgen.default_isa_mix: half AVX-512, half AVX2),
-- opts.version, opts.check (as example's), opts.names ("drawn", the default: each role's
-- name drawn per kernel from its set; "fixed": the first of each, one name a role).
--
-- Modules: kernelgen/render.lua (the text of a kernel from its params, the places a
-- defect can go), kernelgen/defects.lua (the defect table, syntax slips, messages).
--
-- Kernels. `params` says everything a kernel is made of; the code is a pure function of
-- params (and of the defect), so a kernel can be rendered again with or without a defect,
-- or one technique added (SQD's "advance"). What varies:
--   micro-kernel   scalar loop orders (ijk ikj jik kij jki kji); register tiles of 2..4 x
--                  2..4 scalar accumulators; k unrolled with 2/4/8 partial sums; j unrolled
--                  by 2/4/8; AVX-512 or AVX2 rows (one accumulator, masked or scalar tail);
--                  register-blocked AVX-512/AVX2 micro-tiles (4x8 .. 8x8, 4x24 ...)
--   cache blocking any of the i/j/k loops, separate sizes 16..256, three loop orders of
--                  the blocks, sizes as #define, const int or literals
--   OpenMP         parallel for / collapse(2) / a manual split of the rows by thread
--                  number, schedules static/dynamic/guided with chunks
--   prefetch       _mm_prefetch or __builtin_prefetch of A or B, several distances
--   C              zeroed first (memset, a loop, per thread) then accumulated, or written
--                  once from register sums
--   text           indentation, names of blocks, bounds and accumulators, comments
-- Every correct kernel is correct for any M, N, K >= 1 (each tiled loop has its
-- remainder), and the techniques stages.detect() finds in it are exactly `techniques`
-- (Table I order), so the paper's stage check agrees with the label.
--
-- Defects (kernelgen.defects: name, the statuses the engine gives, what it needs):
--   missing_semicolon, missing_brace, undeclared_variable, wrong_intrinsic -> compile_error
--   off_by_one (k <= K) -> runtime_error or verification_error
--   missing_remainder (a tail loop dropped) -> verification_error when a size is not a
--     multiple of the tile (the tests use 37 x 53 x 29)
--   missing_c_init (C never zeroed before accumulating) -> verification_error when the
--     benchmark starts C as NaN (problem.c_init = "nan"); with zeros it goes unnoticed
--   stale_accumulator (a sum set to zero once, outside the loop it belongs to)
--   race -> verification_error: `#pragma omp parallel` without `for` in a kernel that
--     adds into C (every thread adds the whole product); in a kernel that writes C once,
--     a temporary of the parallel loop declared before it (shared) -- such a race often
--     passes, as the compiler keeps the temporary in a register
--   endless_loop (a tail loop without its increment) -> timeout (rare)
--   wrong_isa (repair examples with an AVX2 prompt only: the kernel written with AVX-512
--     intrinsics, kernelgen.avx512_variant) -> compile_error where the machine lacks
--     AVX-512, with the front end's message (kernelgen.isa_message); it runs elsewhere
-- Defects keep the technique set: a defective kernel still passes its stage check, so its
-- failure is the benchmark's.
--
-- Examples (kernelgen.example): kinds "fixed" (prompts.fixed, all techniques), "write"
-- (prompts.write at stage s), "improve" (a correct stage-s kernel -> a faster one: more
-- of the stage's techniques, or better parameters), "advance" (stage s -> s + 1, adding
-- the technique stage s + 1 introduces and keeping the rest), "repair" (a defective
-- kernel and an error message shaped like the engine's -> the same kernel fixed). The
-- completion is the answer format prompts.lua asks for: at most a short sentence, then
-- the code in one ```c block. The target itself carries a defect with probability
-- `defect_rate` (the mistakes a model makes, for reinforcement learning to remove).
-- One file over 600 lines: the samplers and the chat examples share the parameter
-- vocabulary that render.lua reads; split, each half would need the other to be read.

local rngs = require "engine.rng"
local stages = require "method.stages"
local prompts = require "method.prompts"
local split = require "method.heldout_split"
local render = require "kernelgen.render"
local defects = require "kernelgen.defects"
local set_of, name = render.set_of, render.name

local kernelgen = {}

-- Random numbers: engine.rng's splitmix64, so a corpus reproduces from its seed whatever
-- else used math.random.
kernelgen.rng = rngs.new

---------------------------------------------------------------------------------------
-- Parameters
---------------------------------------------------------------------------------------

local TECH = stages.techniques

local function copy(t)
  if type(t) ~= "table" then return t end
  local c = {}
  for k, v in pairs(t) do c[k] = copy(v) end
  return c
end

local ISA, name_sets = render.ISA, render.name_sets

-- A set of names of name_sets by its index: drawn, or the first where the rng's names are
-- "fixed" (kernelgen.render.name).
local function name_index(rng, sets)
  local drawn = rng:int(1, #sets)
  if rng.names == "fixed" then return 1 end
  return drawn
end

local function sample_style(rng)
  return {
    indent = rng:pick({2, 4, 4}),
    blk = name_index(rng, name_sets.blk), ends = name_index(rng, name_sets.ends),
    bsz = name_index(rng, name_sets.bsz), sum = name(rng, name_sets.sum),
    tile = name(rng, name_sets.tile), vacc = name(rng, name_sets.vacc),
    va = name(rng, name_sets.va), vb = name(rng, name_sets.vb),
    lim = name_index(rng, name_sets.lim), split = name_index(rng, name_sets.split),
    comment = rng:int(0, 3),  -- 0: none, else which header comment
    minfn = rng:pick({"ternary", "macro"}),
    zero_float = rng:pick({"0.0", "0.0", "0"}),
  }
end

-- The micro-kernel of a (register blocking, SIMD) pair; `isa` ("avx512", "avx2", nil:
-- either) is the vector ISA of its intrinsics.
local function sample_micro(rng, rb, simd, fixed, isa)
  local m = {}
  if simd then
    local drawn = (rng:chance(fixed and 0.8 or 0.65)) and "avx512" or "avx2"
    m.isa = isa or drawn
    m.fma = rng:chance(0.85)
  end
  if not rb and not simd then
    m.kind = "scalar"
    m.order = rng:weighted({ijk = 3, ikj = 4, jik = 1, kij = 2, jki = 1, kji = 1})
  elseif rb and not simd then
    m.kind = rng:weighted({stile = 5, unroll_k = 2, unroll_j = 3})
    if m.kind == "stile" then
      local t = rng:pick({{2, 2}, {2, 4}, {4, 2}, {4, 4}, {4, 4}})
      m.mr, m.nr = t[1], t[2]
    else
      m.u = rng:pick({2, 4, 4, 8})
    end
  elseif simd and not rb then
    m.kind = rng:weighted({vrow = 3, vikj = 2})
    m.tail = (m.isa == "avx512" and rng:chance(0.5)) and "mask" or "scalar"
  else
    m.kind = "vtile"
    local t
    if m.isa == "avx512" then t = rng:pick({{4, 1}, {4, 2}, {4, 2}, {8, 1}, {2, 2}, {6, 2}, {4, 3}})
    else t = rng:pick({{4, 2}, {4, 1}, {2, 2}, {6, 2}, {4, 3}}) end
    m.mr, m.nv = t[1], t[2]
    m.tail = (m.isa == "avx512" and rng:chance(0.5)) and "mask" or "scalar"
  end
  return m
end

local function sample_cb(rng)
  local dims = rng:weighted({ijk = 5, ik = 2, jk = 2, ij = 2, k = 1, i = 1, j = 1})
  local cb = {form = rng:pick({"define", "define", "const", "literal"})}
  if dims:find("i") then cb.bi = rng:pick({16, 32, 32, 64, 64, 128}) end
  if dims:find("j") then cb.bj = rng:pick({32, 64, 128, 128, 256}) end
  if dims:find("k") then cb.bk = rng:pick({32, 64, 128, 128, 256}) end
  local orders = {}
  for _, o in ipairs({"ijk", "ikj", "jik", "kij"}) do
    local keep = {}
    for ch in o:gmatch(".") do if dims:find(ch) then keep[#keep + 1] = ch end end
    orders[#orders + 1] = table.concat(keep)
  end
  cb.order = rng:pick({orders[1], orders[1], orders[2], orders[3], orders[4]})
  return cb
end

local function sample_omp(rng)
  local o = {style = rng:weighted({["for"] = 5, collapse = 3, manual = 3})}
  if o.style ~= "manual" then
    o.schedule = rng:weighted({none = 4, static = 2, dynamic = 3, guided = 1})
    if o.schedule == "none" then o.schedule = nil
    elseif o.schedule ~= "guided" and rng:chance(0.6) then o.chunk = rng:pick({1, 2, 4, 8, 16}) end
  end
  o.zero_par = rng:chance(0.4)
  return o
end

local function sample_pf(rng)
  local pf = {fn = rng:pick({"mm", "mm", "builtin"}), target = rng:pick({"B", "B", "A"})}
  pf.dist = pf.target == "B" and rng:pick({1, 2, 4, 8}) or rng:pick({8, 16, 32, 64})
  pf.hint = rng:pick({"T0", "T0", "T1"})
  return pf
end

-- Fills in the parameters of the techniques `set` holds (keeping those already there:
-- "advance" adds one technique to a kernel's params).
local function complete_params(rng, p, set, fixed, isa)
  p.tech = {}
  for _, t in ipairs(TECH) do p.tech[t] = set[t] or nil end
  local rb, simd = set.register_blocking == true, set.simd == true
  local m = p.micro
  local fits = m and ((m.kind == "scalar") == (not rb and not simd))
    and ((m.kind == "stile" or m.kind == "unroll_k" or m.kind == "unroll_j") == (rb and not simd))
    and ((m.kind == "vrow" or m.kind == "vikj") == (simd and not rb))
    and ((m.kind == "vtile") == (rb and simd))
  if not fits then
    local new = sample_micro(rng, rb, simd, fixed, isa)
    -- keep the loop order's spirit when a scalar kernel gains register blocking
    if m and m.isa and new.isa and not isa then new.isa = m.isa end
    p.micro = new
  end
  if set.cache_blocking then p.cb = p.cb or sample_cb(rng) else p.cb = nil end
  if set.omp then p.omp = p.omp or sample_omp(rng) else p.omp = nil end
  if set.prefetch then p.pf = p.pf or sample_pf(rng) else p.pf = nil end
  if p.c_mode == nil then p.c_mode = rng:chance(0.65) and "direct" or "accumulate" end
  if p.zero == nil then p.zero = rng:weighted({memset = 5, loop = 3, rows = 2}) end
  p.style = p.style or sample_style(rng)
  return p
end

local function check_techniques(list, what)
  local valid = set_of(TECH)
  for _, t in ipairs(list or {}) do
    if not valid[t] then
      error(string.format("kernelgen: unknown technique '%s' in %s (expected one of: %s)",
                          tostring(t), what, table.concat(TECH, ", ")), 3)
    end
  end
end

-- The technique set: the required ones, and each other allowed one with probability q.
local function sample_set(rng, allowed, required, q)
  local set, a = {}, set_of(allowed)
  for _, t in ipairs(required) do
    if not a[t] then
      error(string.format("kernelgen: technique '%s' is required but not allowed", t), 3)
    end
    set[t] = true
  end
  for _, t in ipairs(TECH) do
    if a[t] and not set[t] and rng:chance(q) then set[t] = true end
  end
  return set
end


-- name -> {expect = statuses the engine gives, weight = share among random defects, ...}
kernelgen.defects = defects.table
kernelgen.defect_names = defects.names
kernelgen.message = defects.message

---------------------------------------------------------------------------------------
-- Kernels
---------------------------------------------------------------------------------------

local function technique_list(p)
  local out = {}
  for _, t in ipairs(TECH) do if p.tech[t] then out[#out + 1] = t end end
  return out
end

local function combo_key(p, info)
  local parts = {#technique_list(p) > 0 and table.concat(technique_list(p), "+") or "plain"}
  local m = p.micro
  local mk = m.kind
  if m.order then mk = mk .. ":" .. m.order end
  if m.mr then mk = mk .. ":" .. m.mr .. "x" .. (m.nr or (m.nv * ISA[m.isa].w)) end
  if m.u then mk = mk .. ":u" .. m.u end
  if m.isa then mk = mk .. ":" .. m.isa .. (m.tail and (":" .. m.tail) or "") end
  parts[#parts + 1] = mk
  if p.cb then
    parts[#parts + 1] = string.format("cb:%s:%s/%s/%s", p.cb.order, p.cb.bi or "-", p.cb.bj or "-", p.cb.bk or "-")
  end
  if p.omp then
    parts[#parts + 1] = "omp:" .. (p.omp.style == "collapse" and not info.collapse and "for" or p.omp.style)
      .. (p.omp.schedule and (":" .. p.omp.schedule .. (p.omp.chunk or "")) or "")
  end
  if p.pf then parts[#parts + 1] = string.format("pf:%s%d", p.pf.target, p.pf.dist) end
  parts[#parts + 1] = (info.needs_zero and "zero+acc" or "direct")
  return table.concat(parts, " ")
end

-- The vector ISAs kernels are written for (render.ISA's keys).
kernelgen.isas = {"avx512", "avx2"}

-- The share of AVX2 repair examples (of kernels with SIMD) whose input is the kernel
-- written with AVX-512 intrinsics, with the compile error a machine without AVX-512
-- gives: the fix is the AVX2 kernel.
kernelgen.wrong_isa_rate = 0.4

-- The engine's error for AVX-512 intrinsics where the target lacks AVX-512: at the first
-- one (line and column of its name, as the kernel-C front end reports it).
function kernelgen.isa_message(code)
  local src = stages.strip(code)  -- same lines and columns up to any comment
  local n = 0
  for line in (src .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local col, name = line:match("()(_mm512_[%w_]+)%s*%(")
    if col then
      return string.format("kernel.c:%d:%d: error: inlining failed in call to 'always_inline' '%s': "
                           .. "target specific option mismatch (the target flags do not enable AVX512F)",
                           n, col, name)
    end
  end
  return nil
end

-- An AVX2 kernel written with AVX-512 intrinsics instead: the same kernel, 8 doubles a
-- vector; a defect ("wrong_isa") only where the machine lacks AVX-512.
function kernelgen.avx512_variant(k)
  if not (k.params.micro and k.params.micro.isa == "avx2") then
    error("kernelgen.avx512_variant: needs an AVX2 kernel", 2)
  end
  local p = copy(k.params)
  p.micro.isa = "avx512"
  local lines, e = render.lines(p, nil)
  local code = table.concat(lines, "\n") .. "\n"
  return {code = code, techniques = k.techniques, params = p, combo = combo_key(p, e.info),
          lines = #lines, defect = "wrong_isa", correct_code = k.code, expect = {"compile_error"},
          compile_message = kernelgen.isa_message(code)}
end

local function check_isa(isa, what)
  if isa ~= nil and not ISA[isa] then
    error(string.format("%s: unknown ISA '%s' (expected one of: %s)", what, tostring(isa),
                        table.concat(kernelgen.isas, ", ")), 3)
  end
end

-- opts: allowed, require (technique lists), defect (nil/false, a name, "random"),
-- params (render these instead of sampling), fixed (bias toward every technique), isa
-- (the SIMD kernels' intrinsics: "avx512", "avx2", nil: either).
function kernelgen.kernel(rng, opts)
  opts = opts or {}
  if not rngs.is(rng) then error("kernelgen.kernel: the first argument must be a kernelgen.rng", 2) end
  check_isa(opts.isa, "kernelgen.kernel")
  local p
  if opts.params then
    p = copy(opts.params)
    if type(p.tech) ~= "table" or type(p.micro) ~= "table" then
      error("kernelgen.kernel: params must come from a kernel made by kernelgen", 2)
    end
  else
    local allowed = opts.allowed or TECH
    check_techniques(allowed, "allowed")
    check_techniques(opts.require, "require")
    local set = sample_set(rng, allowed, opts.require or {}, opts.richness or (opts.fixed and 0.75 or 0.6))
    p = complete_params(rng, {}, set, opts.fixed, opts.isa)
  end
  local lines, e = render.lines(p, nil)
  local k = {code = table.concat(lines, "\n") .. "\n", techniques = technique_list(p), params = p,
             combo = combo_key(p, e.info), lines = #lines}
  local defect = opts.defect
  if defect then
    local ok = defects.applicable(p, e)
    if defect == "random" then
      local weights = {}
      for name, d in pairs(kernelgen.defects) do
        weights[name] = ok[name] and d.weight or 0
      end
      defect = rng:weighted(weights)
    elseif not kernelgen.defects[defect] then
      error(string.format("kernelgen.kernel: unknown defect '%s' (expected one of: %s, random)",
                          tostring(defect), table.concat(defects.names, ", ")), 2)
    elseif not ok[defect] then
      error(string.format("kernelgen.kernel: this kernel has no place for the defect '%s' (%s)",
                          defect, k.combo), 2)
    end
    local out, message
    if defects.at_sites[defect] then
      local at = defect == "race" and defects.race_site(e.count) or defect
      local site = rng:int(1, e.count[at])
      local e2
      out, e2 = render.lines(p, {name = at, site = site})
      k.defect_detail = e2.info.detail
    else
      -- a slip that would change what the pattern detection sees is drawn again: the
      -- defective kernel keeps its label
      local want = table.concat(k.techniques, ",")
      for _ = 1, 20 do
        out, message = defects.text[defect](rng, lines)
        if not out or table.concat(stages.list(stages.detect(table.concat(out, "\n"))), ",") == want then
          break
        end
        out = nil
      end
      if not out then
        error(string.format("kernelgen.kernel: no place for the defect '%s' in this kernel", defect), 2)
      end
    end
    k.correct_code = k.code
    k.code = table.concat(out, "\n") .. "\n"
    k.lines = #out
    k.defect = defect
    k.compile_message = message
    k.expect = kernelgen.defects[defect].expect
  else
    k.expect = {"ok"}
  end
  return k
end

-- A neighbour of a kernel in the template space, for a search over it: the params of k
-- (a kernel of kernelgen.kernel) with one part drawn again (the micro-kernel, the cache
-- blocks, the OpenMP loop, the prefetch, how C is written) or one technique added or
-- dropped. `isa` keeps the intrinsics to one vector ISA. Returns params for
-- kernelgen.kernel(rng, {params = ...}) and what changed.
function kernelgen.mutate(rng, params, isa)
  check_isa(isa, "kernelgen.mutate")
  if type(params) ~= "table" or type(params.tech) ~= "table" or type(params.micro) ~= "table" then
    error("kernelgen.mutate: params must come from a kernel made by kernelgen", 2)
  end
  local q = copy(params)
  local parts = {"micro", "c_mode", "technique"}
  if q.cb then parts[#parts + 1] = "cb" end
  if q.omp then parts[#parts + 1] = "omp" end
  if q.pf then parts[#parts + 1] = "pf" end
  local part = rng:pick(parts)
  local set = set_of(technique_list(q))
  if part == "micro" then
    q.micro = sample_micro(rng, set.register_blocking == true, set.simd == true, true, isa)
  elseif part == "c_mode" then
    q.c_mode = q.c_mode == "direct" and "accumulate" or "direct"
    q.zero = nil  -- drawn again below, as for any kernel
  elseif part == "cb" then q.cb = sample_cb(rng)
  elseif part == "omp" then q.omp = sample_omp(rng)
  elseif part == "pf" then q.pf = sample_pf(rng)
  else
    local t = rng:pick(TECH)
    set[t] = not set[t] or nil
    part = (set[t] and "+" or "-") .. t
  end
  return complete_params(rng, q, set, true, isa), part
end

---------------------------------------------------------------------------------------
-- Examples and corpora
---------------------------------------------------------------------------------------

-- The sizes a task draws from, by version of the corpus (opts.version): version 1's held
-- matmul's held-out 192 and 384 (heldout_split); version 2 (the current) draws 160 and 320
-- in their places, so that a corpus of a seed differs from version 1's only in the examples
-- that had them. Version 1 is kept for audit.lua to rebuild the corpora made with it.
kernelgen.corpus_version = 2
local sizes_of = {
  {64, 96, 128, 192, 256, 256, 256, 384, 512, 512, 768, 1024},
  {64, 96, 128, 160, 256, 256, 256, 320, 512, 512, 768, 1024},
}
local odd_sizes = {67, 100, 129, 200, 250, 300, 333, 500, 509, 700, 1000}

-- A task table for prompts.task_text: sizes 64..1024, opt O0..O3, threads. opts: odd
-- (sizes that are no multiple of a tile), version (kernelgen.corpus_version).
function kernelgen.task(rng, opts)
  opts = opts or {}
  local version = opts.version or kernelgen.corpus_version
  local sizes = sizes_of[version]
  if not sizes then
    error(string.format("kernelgen.task: no corpus version %s (known: 1 to %d)", tostring(version), #sizes_of), 2)
  end
  local pool = opts.odd and odd_sizes or sizes
  local s = rng:pick(pool)
  local t = {M = s, N = s, K = s}
  if rng:chance(0.2) then t.N = rng:pick(pool); t.K = rng:pick(pool) end
  t.opt = rng:weighted({O3 = 6, O2 = 2, O1 = 1, O0 = 1})
  if rng:chance(0.35) then t.threads = rng:pick({1, 2, 4, 8, 16, 32}) end
  return t
end

local lead_ins = {
  "Here is the kernel:", "Here is an optimised kernel:", "The kernel:", "Here is the fixed kernel:",
  "This version should be faster:", "Here is the code:",
}

local function completion(rng, code, kind)
  local lead = ""
  if rng:chance(0.4) then
    local l = rng:pick(lead_ins)
    if l:find("fixed") and kind ~= "repair" then l = "Here is the kernel:" end
    lead = l .. "\n\n"
  end
  return lead .. "```c\n" .. code:gsub("%s+$", "") .. "\n```"
end

kernelgen.kinds = {"fixed", "write", "improve", "advance", "repair"}
kernelgen.default_mix = {fixed = 0.35, write = 0.3, improve = 0.15, advance = 0.1, repair = 0.1}

local function stage_allowed(s) return stages.get(s).allowed end

local function target(rng, opts, params, allowed, req, fixed)
  local rate = opts.defect_rate or 0.15
  local defect = rng:chance(rate) and "random" or nil
  if params then return kernelgen.kernel(rng, {params = params, defect = defect}) end
  return kernelgen.kernel(rng, {allowed = allowed, require = req, defect = defect, fixed = fixed,
                                isa = opts.isa})
end

-- A weaker kernel than p within the same allowed set: some techniques dropped, or the
-- same techniques with slower parameters (AVX-512 rows become AVX2 ones: a slower kernel
-- a machine with AVX-512 also runs).
local function weaker(rng, p, isa)
  local q = copy(p)
  local techs = technique_list(p)
  if #techs > 0 and rng:chance(0.75) then
    local set, drop = set_of(techs), rng:int(1, #techs)
    for _ = 1, drop do
      local t = rng:pick(techs)
      set[t] = nil
    end
    q.micro, q.style = nil, copy(p.style)
    if set.register_blocking == p.tech.register_blocking and set.simd == p.tech.simd then q.micro = copy(p.micro) end
    return complete_params(rng, q, set, nil, isa)
  end
  local m = q.micro
  if m.kind == "scalar" then
    -- unit-stride inner loops (ikj, kij) beat dot products (ijk, jik), which beat the
    -- column walks (jki, kji)
    if m.order == "ikj" or m.order == "kij" then m.order = rng:pick({"ijk", "jik", "jki", "kji"})
    elseif m.order == "ijk" or m.order == "jik" then m.order = rng:pick({"jki", "kji"})
    else return nil end
  elseif m.isa == "avx512" then m.isa = "avx2"; m.tail = "scalar"
  elseif m.kind == "vtile" then m.mr, m.nv = 2, 1
  elseif m.kind == "stile" then m.mr, m.nr = 2, 2
  elseif m.u then m.u = 2
  elseif q.cb then q.cb = nil; q.tech.cache_blocking = nil
  else return nil end
  if q.omp and q.omp.schedule ~= "dynamic" then q.omp.schedule, q.omp.chunk = "dynamic", 1 end
  return q
end

-- The task of an example, with the ISA its prompt names.
local function with_isa(task, isa)
  local t = copy(task)
  t.isa = isa
  return t
end

-- opts: kind, stage, task, defect_rate, isa (the vector ISA the prompt names and the
-- answer's intrinsics use: "avx512", the paper's, by default, or "avx2"; else task.isa).
function kernelgen.example(rng, opts)
  opts = opts or {}
  local kind = opts.kind or "write"
  local isa = opts.isa or (opts.task and opts.task.isa) or "avx512"
  check_isa(isa, "kernelgen.example")
  -- the answers use this ISA's intrinsics (or none); the kernels to improve may be
  -- narrower (an AVX2 kernel in an AVX-512 prompt), never wider
  opts = setmetatable({isa = isa}, {__index = opts})
  local task = with_isa(opts.task or kernelgen.task(rng, {version = opts.version}), isa)
  local ex = {kind = kind, task = task, isa = isa}
  if kind == "fixed" then
    local all = prompts.fixed(task)
    ex.messages = all[rng:int(1, #all)]
    ex.stage = stages.count
    local k = target(rng, opts, nil, TECH, {}, true)
    ex.kernel = k
  elseif kind == "write" then
    local s = opts.stage or rng:int(1, stages.count)
    ex.stage = s
    local intro = stages.get(s).introduces
    ex.messages = prompts.write(s, task)
    ex.kernel = target(rng, opts, nil, stage_allowed(s), (intro and rng:chance(0.75)) and {intro} or {})
  elseif kind == "improve" then
    local s = opts.stage or rng:int(1, stages.count)
    ex.stage = s
    local intro = stages.get(s).introduces
    local fast, slow
    for _ = 1, 50 do
      fast = kernelgen.kernel(rng, {allowed = stage_allowed(s), require = intro and {intro} or {},
                                    isa = isa})
      local q = weaker(rng, fast.params, isa)
      slow = q and kernelgen.kernel(rng, {params = q})
      if slow and slow.code ~= fast.code then break end
      slow = nil
    end
    if not slow then error("kernelgen.example: found no slower kernel to improve at stage " .. s) end
    ex.messages = prompts.improve(slow.code, s, task)
    ex.input = slow
    ex.kernel = target(rng, opts, fast.params)
  elseif kind == "advance" then
    local s = opts.stage or rng:int(1, stages.count - 1)
    if s >= stages.count then error("kernelgen.example: advance needs a stage below " .. stages.count, 2) end
    ex.stage = s
    local base = kernelgen.kernel(rng, {allowed = stage_allowed(s), isa = isa})
    local p = copy(base.params)
    local set = set_of(technique_list(p))
    set[stages.get(s + 1).introduces] = true
    p = complete_params(rng, p, set, nil, isa)
    ex.messages = prompts.advance(base.code, s, task)
    ex.input = base
    ex.kernel = target(rng, opts, p)
    ex.stage = s + 1
  elseif kind == "repair" then
    local s = opts.stage or rng:int(1, stages.count)
    ex.stage = s
    local wrong_isa = opts.defect == "wrong_isa"
    if wrong_isa and (isa ~= "avx2" or s < 4) then
      error("kernelgen.example: the defect 'wrong_isa' needs an AVX2 prompt at stage 4 or later", 2)
    end
    local good = kernelgen.kernel(rng, {allowed = stage_allowed(s), isa = isa,
                                        require = wrong_isa and {"simd"} or nil})
    local bad
    if isa == "avx2" and good.params.tech.simd and not opts.defect then
      wrong_isa = rng:chance(kernelgen.wrong_isa_rate)
    end
    if wrong_isa then
      bad = kernelgen.avx512_variant(good)
    else
      bad = kernelgen.kernel(rng, {params = good.params, defect = opts.defect or "random"})
    end
    if not wrong_isa and kernelgen.defects[bad.defect].odd_sizes and not opts.task then
      task = with_isa(kernelgen.task(rng, {odd = true, version = opts.version}), isa); ex.task = task
    end
    local message = kernelgen.message(rng, bad, task)
    ex.messages = prompts.repair(bad.code, s, message, task)
    ex.input, ex.message = bad, message
    ex.kernel = target(rng, opts, good.params)
  else
    error(string.format("kernelgen.example: unknown kind '%s' (expected one of: %s)", tostring(kind),
                        table.concat(kernelgen.kinds, ", ")), 2)
  end
  ex.completion = completion(rng, ex.kernel.code, kind)
  ex.techniques = ex.kernel.techniques
  ex.defect = ex.kernel.defect
  ex.combo = ex.kernel.combo
  if opts.check ~= false then
    split.check({task = "matmul", size = ex.task, isa = isa, messages = ex.messages, completion = ex.completion},
                "kernelgen.example")
  end
  return ex
end

-- The ISAs of a corpus by default: half its prompts name AVX-512 (with AVX-512 or plain
-- answers), half AVX2/FMA (with AVX2 or plain answers), so a model trained on it writes
-- for the machine its prompt names.
kernelgen.default_isa_mix = {avx512 = 0.5, avx2 = 0.5}

-- n examples. opts: seed (1), mix ({kind = share}), defect_rate (0.15), write_stage6
-- (share of "write" examples at stage 6, 0.4; the rest spread over stages 1-5), isa
-- (one ISA for every example, or {isa = share}: default kernelgen.default_isa_mix).
function kernelgen.corpus(n, opts)
  opts = opts or {}
  if math.type(n) ~= "integer" or n < 0 then error("kernelgen.corpus: n must be a non-negative integer", 2) end
  local mix = opts.mix or kernelgen.default_mix
  for k, w in pairs(mix) do
    local known = false
    for _, kind in ipairs(kernelgen.kinds) do known = known or kind == k end
    if not known or type(w) ~= "number" or w < 0 then
      error(string.format("kernelgen.corpus: bad mix entry %s = %s (kinds: %s)", tostring(k), tostring(w),
                          table.concat(kernelgen.kinds, ", ")), 2)
    end
  end
  local isas = opts.isa or kernelgen.default_isa_mix
  if type(isas) == "string" then
    check_isa(isas, "kernelgen.corpus")
  else
    for k, w in pairs(isas) do
      if not ISA[k] or type(w) ~= "number" or w < 0 then
        error(string.format("kernelgen.corpus: bad isa entry %s = %s (ISAs: %s)", tostring(k), tostring(w),
                            table.concat(kernelgen.isas, ", ")), 2)
      end
    end
  end
  if opts.names ~= nil and opts.names ~= "drawn" and opts.names ~= "fixed" then
    error(string.format("kernelgen.corpus: names must be drawn or fixed, got %s", tostring(opts.names)), 2)
  end
  local rng = kernelgen.rng(opts.seed or 1)
  rng.names = opts.names
  local share6 = opts.write_stage6 or 0.4
  local out = {}
  for i = 1, n do
    local isa = type(isas) == "string" and isas or rng:weighted(isas)
    local kind = rng:weighted(mix)
    local stage
    if kind == "write" then stage = rng:chance(share6) and stages.count or rng:int(1, stages.count - 1)
    elseif kind == "advance" then stage = rng:int(1, stages.count - 1) end
    out[i] = kernelgen.example(rng, {kind = kind, stage = stage, defect_rate = opts.defect_rate,
                                     task = opts.task and opts.task(rng) or nil, isa = isa,
                                     version = opts.version, check = opts.check})
  end
  return out
end

-- Diversity of kernels or examples: {n, combos, technique_sets, top_text_share,
-- defects = {name = count}, kinds = {kind = count}, isas = {isa = count},
-- lines = {min, mean, max}}.
function kernelgen.stats(list)
  local combos, sets, texts, defects, kinds, isas = {}, {}, {}, {}, {}, {}
  local top, nc, ns = 0, 0, 0
  local lmin, lmax, lsum = math.huge, 0, 0
  for _, x in ipairs(list) do
    local k = x.kernel or x
    local text = x.completion or k.code
    if k.combo and not combos[k.combo] then combos[k.combo] = true; nc = nc + 1 end
    local key = table.concat(k.techniques or {}, "+")
    if not sets[key] then sets[key] = true; ns = ns + 1 end
    texts[text] = (texts[text] or 0) + 1
    if texts[text] > top then top = texts[text] end
    if k.defect then defects[k.defect] = (defects[k.defect] or 0) + 1 end
    if x.kind then kinds[x.kind] = (kinds[x.kind] or 0) + 1 end
    if x.isa then isas[x.isa] = (isas[x.isa] or 0) + 1 end
    local l = k.lines or select(2, (k.code or ""):gsub("\n", ""))
    lmin, lmax, lsum = math.min(lmin, l), math.max(lmax, l), lsum + l
  end
  local n = #list
  return {n = n, combos = nc, technique_sets = ns, top_text_share = n > 0 and top / n or 0,
          defects = defects, kinds = kinds, isas = isas,
          lines = {min = n > 0 and lmin or 0, mean = n > 0 and lsum / n or 0, max = lmax}}
end

return kernelgen
