-- Synthetic kernels for the task suite's training tasks (stdlib/tasks), beside kernelgen's
-- matmul ones: correct C kernels in each task's prototype composing the techniques its
-- spec lists, labelled with exactly the set stages.detect() finds, and chat examples.
--
--   local kt = require "kernelgen.tasks"
--   kt.tasks                                   -- the task names covered
--   local k = kt.kernel(rng, "axpy", {allowed = {...}, require = {...}, isa = "avx2"})
--   k.code, k.techniques (Table I order), k.task, k.isa
--   local ex = kt.example(rng, {task = "dot", kind = "repair", stage = s, isa = ..., defect = ...})
--   ex.messages, ex.completion, ex.kind, ex.stage, ex.techniques, ex.task, ex.isa, ex.kernel,
--   ex.size (the prompt's), ex.input (improve, advance, repair), ex.message, ex.defect (repair)
--   local list = kt.corpus(n, {seed = 1, isa = "avx2" | {avx512 = .5, avx2 = .5},
--                              mix = {fixed = .35, write = .3, ...}, tasks = {...}})
--
-- Kinds, as kernelgen's for matmul, on the task's ladder (stages.for_task): "fixed"
-- (prompts.fixed), "write" (stage s), "improve" (a correct stage-s kernel -> one with
-- more of the stage's techniques, or where it has them all another draw), "advance"
-- (stage s -> s + 1: the same draw plus the technique s + 1 introduces; ex.stage is
-- s + 1), "repair" (a kernel with a defect of kernelgen/tasks/defects.lua and the
-- engine's message for it -> the correct kernel). Answers are correct; in an AVX2
-- example the input and answer use AVX2 intrinsics or none, in an AVX-512 one the input
-- to improve may be AVX2. Default mix: fixed .35, write .3, improve .15, advance .1,
-- repair .1.
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

local stages = require "method.stages"
local prompts = require "method.prompts"
local etasks = require "engine.tasks"
local split = require "method.heldout_split"

local M = {}

M.tasks = {"axpy", "dot", "nrm2", "asum", "jacobi2d_5", "jacobi2d_9", "jacobi3d_7", "gemv_n", "gemv_t", "ger",
           "symv", "trsv", "spmv_csr", "prefix_sum", "col_sums", "transpose", "gemm_tn", "gemm_batched", "syrk",
           "trmm", "trsm"}
M.isas = {"avx512", "avx2"}

local parts = require "kernelgen.tasks.parts"
local set_of, TECH, VEC = parts.set_of, parts.TECH, parts.VEC
local blas1 = require "kernelgen.tasks.blas1"
local stencil = require "kernelgen.tasks.stencil"
local blas2 = require "kernelgen.tasks.blas2"
local sparse = require "kernelgen.tasks.sparse"
local scan = require "kernelgen.tasks.scan"
local transpose = require "kernelgen.tasks.transpose"
local blas3 = require "kernelgen.tasks.blas3"
local tdefects = require "kernelgen.tasks.defects"

---------------------------------------------------------------------------------------
-- Kernels
---------------------------------------------------------------------------------------

local generators = {
  axpy = function(rng, set, isa) return blas1.gen_axpy(rng, set, isa) end,
  gemv_n = function(rng, set, isa) return blas2.gen_gemv_n(rng, set, isa) end,
  gemv_t = function(rng, set, isa) return blas2.gen_gemv_t(rng, set, isa) end,
  ger = function(rng, set, isa) return blas2.gen_ger(rng, set, isa) end,
  symv = function(rng, set, isa) return blas2.gen_symv(rng, set, isa) end,
  trsv = function(rng, set, isa) return blas2.gen_trsv(rng, set, isa) end,
  spmv_csr = function(rng, set, isa) return sparse.gen_spmv(rng, set, isa) end,
  prefix_sum = function(rng, set, isa) return scan.gen_prefix(rng, set, isa) end,
  col_sums = function(rng, set, isa) return scan.gen_col_sums(rng, set, isa) end,
  transpose = function(rng, set, isa) return transpose.gen_transpose(rng, set, isa) end,
  gemm_tn = function(rng, set, isa) return blas3.gen_rows_product(rng, "gemm_tn", set, isa) end,
  trmm = function(rng, set, isa) return blas3.gen_rows_product(rng, "trmm", set, isa) end,
  gemm_batched = function(rng, set, isa) return blas3.gen_gemm_batched(rng, set, isa) end,
  syrk = function(rng, set, isa) return blas3.gen_syrk(rng, set, isa) end,
  trsm = function(rng, set, isa) return blas3.gen_trsm(rng, set, isa) end,
}
for name in pairs(blas1.reductions) do
  generators[name] = function(rng, set, isa) return blas1.gen_reduction(rng, name, set, isa) end
end
for name in pairs(stencil.stencils) do
  generators[name] = function(rng, set, isa) return stencil.gen_stencil(rng, name, set, isa) end
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
local kind_lead_ins = {
  improve = {"Here is the kernel:", "This version should be faster:", "Here is an optimised kernel:", "Here is the code:"},
  repair = {"Here is the fixed kernel:", "Here is the kernel:", "The kernel:", "Here is the code:"},
}

local function completion(rng, code, kind)
  local lead = rng:chance(0.4) and (rng:pick(kind_lead_ins[kind] or lead_ins) .. "\n\n") or ""
  return lead .. "```c\n" .. code:gsub("%s+$", "") .. "\n```"
end

M.kinds = {"fixed", "write", "improve", "advance", "repair"}
M.default_mix = {fixed = 0.35, write = 0.3, improve = 0.15, advance = 0.1, repair = 0.1}
M.default_isa_mix = {avx512 = 0.5, avx2 = 0.5}

-- A kernel's names follow its rng's `names` ("fixed": one per role, parts.name); a fresh
-- rng of a pair's kernels takes it from the rng that drew the pair.
local function rng_of(seed, names)
  local rng = require("engine.rng").new(seed)
  rng.names = names
  return rng
end
local function new_seed(rng) return rng:int(0, 1 << 40) end

local function union(a, b)
  local s = set_of(a)
  for _, t in ipairs(b) do s[t] = true end
  local out = {}
  for _, t in ipairs(TECH) do if s[t] then out[#out + 1] = t end end
  return out
end

-- A kernel of exactly the techniques `list`, drawn from `seed`: two kernels of one seed
-- share the draws (names, layout, style) their techniques leave alone, so a pair reads
-- as one kernel changed.
local function exact(rng, seed, name, list, isa)
  return M.kernel(rng_of(seed, rng.names), name, {allowed = list, require = list, isa = isa})
end

-- SQD's improve at a stage: a correct kernel and a faster one. Mostly the faster one adds
-- some of the stage's techniques the slow one lacks (often the one the stage introduces);
-- where the slow one has them all, it is another draw, or in an AVX-512 prompt at times
-- the same draw with AVX-512 where the slow one has AVX2 vectors.
local function improve_pair(rng, name, stage, isa)
  local may = M.techniques(name, stage.allowed)
  local seed = new_seed(rng)
  if #may > 0 and rng:chance(0.75) then
    local slow = {}
    for _, t in ipairs(may) do if rng:chance(0.5) then slow[#slow + 1] = t end end
    if #slow == #may then table.remove(slow, rng:int(1, #slow)) end
    local have, missing = set_of(slow), {}
    for _, t in ipairs(may) do if not have[t] then missing[#missing + 1] = t end end
    local intro = stage.introduces
    local add = {(intro and not have[intro] and rng:chance(0.6)) and intro or rng:pick(missing)}
    for _, t in ipairs(missing) do if t ~= add[1] and rng:chance(0.5) then add[#add + 1] = t end end
    return exact(rng, seed, name, slow, isa), exact(rng, seed, name, union(slow, add), isa)
  end
  local narrow = isa == "avx512" and set_of(may).simd and rng:chance(0.5)
  local slow = exact(rng, seed, name, may, narrow and "avx2" or isa)
  for _ = 1, 20 do
    local fast = exact(rng, narrow and seed or new_seed(rng), name, may, isa)
    if fast.code ~= slow.code then return slow, fast end
  end
  error("kernelgen.tasks.example: found no other kernel to improve for " .. name)
end

-- SQD's advance from stage s: a stage-s kernel and the same draw with the technique
-- stage s + 1 introduces added.
local function advance_pair(rng, name, ladder, s, isa)
  local new = ladder.get(s + 1).introduces
  if not set_of(M.techniques(name))[new] then
    error(string.format("kernelgen.tasks.example: %s's spec does not allow %s", name, tostring(new)), 3)
  end
  local base = {}
  for _, t in ipairs(M.techniques(name, ladder.get(s).allowed)) do
    if t ~= new and rng:chance(0.6) then base[#base + 1] = t end
  end
  local seed = new_seed(rng)
  return exact(rng, seed, name, base, isa), exact(rng, seed, name, union(base, {new}), isa)
end

-- A correct stage kernel and a copy with `defect` (a name of kernelgen.tasks.defects, or
-- "random"); kernels without a site for it are drawn again.
local function repair_pair(rng, name, stage, s, isa, defect)
  for _ = 1, 40 do
    local good = M.kernel(rng, name, {isa = isa, allowed = stage.allowed})
    local bad = tdefects.inject(rng, good.code, defect)
    if bad then
      bad.techniques, bad.task, bad.isa = good.techniques, name, isa
      return good, bad
    end
  end
  error(string.format("kernelgen.tasks.example: no %s kernel at stage %d has a site for the defect '%s'",
                      name, s, defect), 3)
end

-- opts: task (a covered name), kind (one of M.kinds), stage (the prompt's; for "advance"
-- the stage it starts from, ex.stage then being s + 1, the answer's; default drawn over
-- the task's ladder), isa ("avx512", the default, or "avx2"), defect (for "repair": a
-- name of kernelgen.tasks.defects; default one the kernel has a site for), check (false:
-- emit an example that holds an item of the held-out split; else it is refused, named).
function M.example(rng, opts)
  opts = opts or {}
  local name = opts.task or rng:pick(M.tasks)
  local sp = spec(name)
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
  elseif kind == "improve" then
    local s = opts.stage or rng:int(1, ladder.count)
    ex.stage = s
    ex.input, ex.kernel = improve_pair(rng, name, ladder.get(s), isa)
    ex.messages = prompts.improve(ex.input.code, s, ptask)
  elseif kind == "advance" then
    local s = opts.stage or rng:int(1, ladder.count - 1)
    if s >= ladder.count then
      error(string.format("kernelgen.tasks.example: advance needs a stage below %d for %s", ladder.count, name), 2)
    end
    ex.input, ex.kernel = advance_pair(rng, name, ladder, s, isa)
    ex.messages = prompts.advance(ex.input.code, s, ptask)
    ex.stage = s + 1
  elseif kind == "repair" then
    local s = opts.stage or rng:int(1, ladder.count)
    ex.stage = s
    local good, bad = repair_pair(rng, name, ladder.get(s), s, isa, opts.defect or "random")
    -- a dropped remainder is only wrong where a size is not a multiple of its step
    if tdefects.table[bad.defect].odd_sizes then ptask.size = tdefects.odd_size(rng, sp) end
    ex.message = tdefects.message(rng, bad, sp, ptask.size)
    ex.messages = prompts.repair(bad.code, s, ex.message, ptask)
    ex.input, ex.kernel, ex.defect = bad, good, bad.defect
  else
    error(string.format("kernelgen.tasks.example: unknown kind '%s' (expected one of: %s)", tostring(kind),
                        table.concat(M.kinds, ", ")), 2)
  end
  ex.size = ptask.size
  ex.completion = completion(rng, ex.kernel.code, kind)
  ex.techniques = ex.kernel.techniques
  if opts.check ~= false then
    split.check({task = name, size = ex.size, isa = isa, messages = ex.messages, completion = ex.completion},
                "kernelgen.tasks.example")
  end
  return ex
end

-- n examples going round the covered tasks (or opts.tasks), each task's in turn.
-- opts: seed (1), mix ({kind = share}), isa (one ISA or {isa = share}), check (example's),
-- names ("drawn", the default: each role's name drawn per kernel; "fixed": one name a role).
function M.corpus(n, opts)
  opts = opts or {}
  if math.type(n) ~= "integer" or n < 0 then error("kernelgen.tasks.corpus: n must be a non-negative integer", 2) end
  local rng = rng_of(opts.seed or 1)
  local names = opts.tasks or M.tasks
  for _, name in ipairs(names) do spec(name) end
  local mix = opts.mix or M.default_mix
  local known = set_of(M.kinds)
  for k, w in pairs(mix) do
    if not known[k] or type(w) ~= "number" or w < 0 then
      error(string.format("kernelgen.tasks.corpus: bad mix entry %s = %s (kinds: %s)", tostring(k), tostring(w),
                          table.concat(M.kinds, ", ")), 2)
    end
  end
  local isas = opts.isa or M.default_isa_mix
  if opts.names ~= nil and opts.names ~= "drawn" and opts.names ~= "fixed" then
    error(string.format("kernelgen.tasks.corpus: names must be drawn or fixed, got %s", tostring(opts.names)), 2)
  end
  rng.names = opts.names
  local out = {}
  for idx = 1, n do
    local name = names[(idx - 1) % #names + 1]
    local isa = type(isas) == "string" and isas or rng:weighted(isas)
    out[idx] = M.example(rng, {task = name, kind = rng:weighted(mix), isa = isa, check = opts.check})
  end
  return out
end

return M
