-- Table I of the paper: the six stages of the Staged Quality-Diversity loop over five
-- optimisation techniques, and the check that a kernel uses no technique its stage
-- forbids.
--
--   local stages = require "method.stages"
--   local verdict = stages.check(3, code)          -- the paper's pattern detection
--   local verdict = stages.check(3, code, result.features)   -- the front end's features
--   verdict.ok, verdict.used, verdict.forbidden, verdict.missing, verdict.detector
--
-- Our reading of Table I: the stages add one technique at a time, in the order the paper
-- lists them, so stage s allows the first s - 1 techniques. Stage 1 is plain C (loop
-- order and scalar code only); stage 6 allows all five. A stage also names the
-- technique it introduces (`introduces`): the SQD prompts ask for it when a kernel is
-- deepened into that stage. Using it is not enforced unless `enforce_introduced` is set,
-- because the paper's check is about forbidden techniques only.
--
-- Table I's SIMD is AVX-512, as the paper's machine had it. A machine without AVX-512
-- cannot compile AVX-512 intrinsics, so the SIMD technique is named after the vector ISA
-- the kernels are compiled for (`stages.isas`, bench.machine().simd): `stages.name(tech,
-- isa)`, `stages.names_for(isa)`, and `stages.check(s, code, features, {isa = ...})`
-- reports a kernel whose vectors that ISA lacks.
--
-- Edit `stages.table` to change the staging; everything else reads it.
--
-- Other tasks than matmul (stdlib/tasks) climb a ladder of their own, made from the
-- techniques their spec lists (`stages.for_task(spec)`, `stages.ladder(techniques)`):
-- stage 1 is plain C, each later stage adds the next of the task's techniques in Table I
-- order, and the last stage allows all five, as Table I's does. A ladder has the
-- stage functions below (get, count, forbidden, check, describe, detector, lowest_for);
-- the module itself is Table I's ladder.

local stages = {}
local get_in  -- a ladder's stage record (below)

-- The five techniques, in the order of Table I's columns (the names task specs use).
stages.techniques = {table.unpack(require("engine.tasks").techniques)}

-- Human-readable names, used by the prompts and the report: Table I's, for AVX-512
-- (stages.names_for(isa) for another vector ISA).
stages.names = {
  register_blocking = "register blocking",
  cache_blocking = "cache blocking",
  simd = "AVX-512 SIMD intrinsics",
  omp = "OpenMP parallelisation",
  prefetch = "software prefetching",
}

-- The vector ISAs a machine may offer for FP64 (bench.machine().simd), widest first:
-- the name the prompts and the report use, the intrinsics it brings, its width in bits.
stages.isas = {
  avx512 = {name = "AVX-512", intrinsics = "_mm512_*_pd", fma = "_mm512_fmadd_pd", width = 512},
  avx2 = {name = "AVX2/FMA", intrinsics = "_mm256_*_pd", fma = "_mm256_fmadd_pd", width = 256},
  avx = {name = "AVX", intrinsics = "_mm256_*_pd", width = 256},
  sse2 = {name = "SSE2", intrinsics = "_mm_*_pd", width = 128},
}
stages.isa_order = {"avx512", "avx2", "avx", "sse2"}
stages.default_isa = "avx512"  -- the paper's

-- The record of an ISA (nil: the paper's AVX-512), with a clear error for an unknown one.
function stages.isa(isa)
  isa = isa or stages.default_isa
  local rec = stages.isas[isa]
  if not rec then
    error(string.format("stages: unknown vector ISA '%s' (expected one of: %s)", tostring(isa),
                        table.concat(stages.isa_order, ", ")), 2)
  end
  return rec
end

-- The name of a technique for kernels compiled for `isa`.
function stages.name(tech, isa)
  if tech == "simd" then return stages.isa(isa).name .. " SIMD intrinsics" end
  return stages.names[tech]
end

-- stages.names as it reads for `isa`.
function stages.names_for(isa)
  local out = {}
  for _, tech in ipairs(stages.techniques) do out[tech] = stages.name(tech, isa) end
  return out
end

-- What each stage allows and introduces, in words, for `isa` (Table I's rows).
local function describe_in(L, s, isa)
  local stage = get_in(L, s)
  local allowed = {}
  for i, tech in ipairs(stage.allowed) do allowed[i] = stages.name(tech, isa) end
  return {stage = s, allowed = #allowed > 0 and table.concat(allowed, ", ")
            or "none (plain C: loop order, scalar code)",
          introduces = stage.introduces and stages.name(stage.introduces, isa) or "-"}
end
function stages.describe(s, isa) return describe_in(stages, s, isa) end

-- detector: "regex" (the paper's pattern detection on the source), "features" (the
-- structural features the kernel-C front end reports with an evaluation result), or
-- "auto" (features when the result carries them, the patterns otherwise).
stages.table = {
  {allowed = {}, introduces = nil, detector = "regex"},
  {allowed = {"register_blocking"}, introduces = "register_blocking", detector = "regex"},
  {allowed = {"register_blocking", "cache_blocking"}, introduces = "cache_blocking",
   detector = "regex"},
  {allowed = {"register_blocking", "cache_blocking", "simd"}, introduces = "simd",
   detector = "regex"},
  {allowed = {"register_blocking", "cache_blocking", "simd", "omp"}, introduces = "omp",
   detector = "regex"},
  {allowed = {"register_blocking", "cache_blocking", "simd", "omp", "prefetch"},
   introduces = "prefetch", detector = "regex"},
}

stages.count = #stages.table

-- The stage record for a number, with a clear error for a bad one.
function get_in(L, s)
  local stage = L.table[s]
  if not stage then
    error(string.format("stages: there is no stage %s (stages are 1 to %d)", tostring(s),
                        #L.table), 3)
  end
  return stage
end
function stages.get(s) return get_in(stages, s) end

local function set_of(list)
  local set = {}
  for _, x in ipairs(list) do set[x] = true end
  return set
end

-- The techniques a stage forbids, in Table I order.
local function forbidden_in(L, s)
  local allowed = set_of(get_in(L, s).allowed)
  local out = {}
  for _, tech in ipairs(stages.techniques) do
    if not allowed[tech] then out[#out + 1] = tech end
  end
  return out
end
function stages.forbidden(s) return forbidden_in(stages, s) end

---------------------------------------------------------------------------------------
-- Pattern detection (the paper's method). Lua patterns play the role of the paper's
-- regular expressions. Comments and string literals are removed first, so a comment
-- that mentions "_mm512" or "#pragma omp" does not count.
---------------------------------------------------------------------------------------

-- The end of the string or character literal opened at `open` (the index of its closing
-- quote), or of the line when it is never closed.
local function literal_end(code, open)
  local quote, k = code:sub(open, open), open + 1
  while true do
    local q = code:find("[\\\n" .. quote .. "]", k)
    if not q then return #code end
    local ch = code:sub(q, q)
    if ch == "\\" then k = q + 2
    elseif ch == "\n" then return q - 1
    else return q end
  end
end
stages.literal_end = literal_end

-- The source with comments, string and character literals blanked out (line breaks kept).
function stages.strip(code)
  local out, i, n = {}, 1, #code
  while i <= n do
    local j = code:find("[/\"']", i)
    if not j then
      out[#out + 1] = code:sub(i)
      break
    end
    out[#out + 1] = code:sub(i, j - 1)
    local two = code:sub(j, j + 1)
    if two == "/*" then
      local close = code:find("*/", j + 2, true)
      local stop = close and close + 1 or n
      out[#out + 1] = (code:sub(j, stop):gsub("[^\n]", " "))
      i = stop + 1
    elseif two == "//" then
      i = code:find("\n", j, true) or n + 1
    elseif two:sub(1, 1) == "/" then
      out[#out + 1] = "/"
      i = j + 1
    else
      local quote = code:sub(j, j)
      out[#out + 1] = quote .. quote
      i = literal_end(code, j) + 1
    end
  end
  return table.concat(out)
end

-- Integer constants the source names (#define BS 64, const int BS = 64): block sizes.
local function named_constants(code)
  local consts = {}
  for name, value in code:gmatch("#%s*define%s+([%a_][%w_]*)%s+%(?(%d+)%)?") do
    consts[name] = tonumber(value)
  end
  for name, value in code:gmatch("const%s+[%a_ ]*int%s+([%a_][%w_]*)%s*=%s*(%d+)") do
    consts[name] = tonumber(value)
  end
  return consts
end

-- Loops that step by more than one: {var = step} where step is a number, or true when
-- the step is a name whose value the source does not give.
local function strided_loops(code, consts)
  local strided = {}
  local function note(var, step)
    local v = tonumber(step) or consts[step]
    if v == nil then strided[var] = true
    elseif v > 1 then strided[var] = v end
  end
  for header in code:gmatch("for%s*(%b())") do
    local var, step = header:match("([%a_][%w_]*)%s*%+=%s*([%w_]+)%s*%)$")
    if var then note(var, step) end
    local v2, v3, step2 = header:match("([%a_][%w_]*)%s*=%s*([%a_][%w_]*)%s*%+%s*([%w_]+)%s*%)$")
    if v2 and v2 == v3 then note(v2, step2) end
  end
  return strided
end

-- Loops that start at a strided loop's variable: for (i = ib; ...) inside for (ib ...).
local function tiled_loops(code, strided)
  local tiles = {}
  for header in code:gmatch("for%s*(%b())") do
    local var, start = header:match("^%(%s*[%a_ ]-([%a_][%w_]*)%s*=%s*([%a_][%w_]*)%s*[;%+]")
    if var and start and strided[start] and start ~= var then
      tiles[#tiles + 1] = {var = var, outer = start, block = strided[start]}
    end
  end
  return tiles
end

-- Distinct accumulators: x = _mm*_fmadd_*(.., x) / _mm*_add_*(x, ..) for vectors,
-- x += a * b for scalars.
local function accumulators(code)
  local vector, scalar = {}, {}
  local intrinsics = code:find("_mm", 1, true) ~= nil
  for _, op in ipairs(intrinsics and {"_fn?madd_p[sd]", "_add_p[sd]"} or {}) do
    for lhs, rest in code:gmatch("([%a_][%w_%[%]%.]*)%s*=%s*_mm%d*" .. op .. "%s*(%b())") do
      if rest:find(lhs, 1, true) then vector[lhs] = true end
    end
  end
  for statement in code:gmatch("[^;{}]+") do
    local lhs, rhs = statement:match("^%s*([%a_][^=]-)%s*%+=(.*)$")
    if lhs and rhs:find("*", 1, true) then scalar[(lhs:gsub("%s", ""))] = true end
  end
  local function count(t) local n = 0; for _ in pairs(t) do n = n + 1 end; return n end
  return count(vector), count(scalar)
end

-- Parameters of the pattern detection: a tiled loop whose block is at least
-- `cache_block_min` elements is cache blocking, a smaller one register blocking.
stages.regex = {cache_block_min = 16}

-- The set of techniques the source uses, by patterns: {omp = true, simd = {width =}, ...}.
function stages.detect(code)
  local src = stages.strip(code)
  local used = {}

  -- OpenMP: a parallel/worksharing directive or a call into the OpenMP runtime.
  -- "#pragma omp simd" alone is vectorisation, not threading.
  for directive in src:gmatch("#%s*pragma%s+omp%s+([%a_]+)") do
    if directive ~= "simd" and directive ~= "declare" then used.omp = true end
  end
  if src:find("omp_get_thread_num%s*%(") or src:find("omp_get_num_threads%s*%(") then
    used.omp = true
  end

  -- SIMD: x86 vector intrinsics or types (any width; Table I's SIMD is the machine's
  -- vector ISA, AVX-512 in the paper, which the prompts ask for, but narrower vectors
  -- are the same technique), or omp simd.
  local width
  if src:find("_mm512_") or src:find("__m512") then width = 512
  elseif src:find("_mm256_") or src:find("__m256") then width = 256
  elseif src:find("_mm_[%a_]-_p[sd]%s*%(") or src:find("__m128") then width = 128 end
  if width then used.simd = {width = width}
  elseif src:find("#%s*pragma%s+omp[%w%s]-simd") or src:find("vector_size%s*%(") then
    used.simd = {width = 0}
  end

  -- Prefetch: the intrinsic or the builtin.
  if src:find("_mm_prefetch%s*%(") or src:find("__builtin_prefetch%s*%(") then
    used.prefetch = true
  end

  -- Blocking: loops tiled by a strided outer loop. Large blocks are cache blocking,
  -- small ones register blocking; several accumulators are register blocking too.
  local consts = named_constants(src)
  local strided = strided_loops(src, consts)
  for _, tile in ipairs(tiled_loops(src, strided)) do
    if tile.block == true or tile.block >= stages.regex.cache_block_min then
      used.cache_blocking = true
    else
      used.register_blocking = true
    end
  end
  local n_vector, n_scalar = accumulators(src)
  local small_stride = false
  for _, step in pairs(strided) do
    if step ~= true and step < stages.regex.cache_block_min then small_stride = true end
  end
  if n_vector >= 2 or (n_scalar >= 2 and small_stride) then used.register_blocking = true end
  return used
end

-- The technique set from the front end's structural features: its `techniques` list
-- when it has one (what evaluation results and kernelc.features carry), else any of the
-- five keys whose value is true or a table not marked `used = false` (OpenMP may be
-- keyed `openmp`, as the front end names it).
function stages.from_features(features)
  if type(features) ~= "table" then
    error("stages: features must be a table like {simd = {width = 512}, omp = true}", 2)
  end
  local used = {}
  if type(features.techniques) == "table" then
    local known = {}
    for _, tech in ipairs(stages.techniques) do known[tech] = true end
    for _, tech in ipairs(features.techniques) do
      if known[tech] then used[tech] = features[tech == "omp" and "openmp" or tech] or true end
    end
    return used
  end
  for _, tech in ipairs(stages.techniques) do
    local v = features[tech]
    if v == nil and tech == "omp" then v = features.openmp end
    if v == true or (type(v) == "table" and v.used ~= false) then used[tech] = v end
  end
  return used
end

-- The names of the techniques in a set, in Table I order.
function stages.list(used)
  local out = {}
  for _, tech in ipairs(stages.techniques) do
    if used[tech] then out[#out + 1] = tech end
  end
  return out
end

-- Which detector applies: the stage's own unless `override` names one.
local function detector_in(L, s, features, override)
  local d = override or get_in(L, s).detector or "regex"
  if d == "auto" then return features and "features" or "regex" end
  if d ~= "regex" and d ~= "features" then
    error("stages: unknown detector '" .. tostring(d) .. "' (regex, features or auto)", 3)
  end
  return d
end
function stages.detector(s, features, override) return detector_in(stages, s, features, override) end

-- The width in bits of the widest vectors a SIMD record shows: the patterns' {width =
-- bits}, or the front end's {families =, width = doubles}; 0 when unknown (omp simd).
function stages.vector_bits(simd)
  if type(simd) ~= "table" then return 0 end
  if type(simd.families) == "table" and #simd.families > 0 then
    local bits = 0
    for _, f in ipairs(simd.families) do
      bits = math.max(bits, f == "avx512" and 512 or (f == "avx2" or f == "fma" or f == "avx") and 256
                            or 128)
    end
    return bits
  end
  local w = tonumber(simd.width) or 0
  return (w > 0 and w < 64) and w * 64 or w
end

-- Checks a kernel against stage s. `features` is the evaluation result's features (may
-- be nil); `opts.detector` overrides the stage's detector, `opts.enforce_introduced`
-- also requires the technique the stage introduces; `opts.isa` (a key of stages.isas)
-- notes a kernel whose vectors are wider than that ISA's (`beyond_isa`, in bits: it
-- will not compile there, which the benchmark reports; the stage rules do not care).
-- Returns {ok, stage, detector, used = {names}, forbidden = {names}, missing = {names},
-- message, isa, beyond_isa}.
local function check_in(L, s, code, features, opts)
  opts = opts or {}
  local stage = get_in(L, s)
  local detector = detector_in(L, s, features, opts.detector)
  local used
  if detector == "features" then
    if features == nil then
      error(string.format("stages: stage %d uses the front end's features, and the result "
                          .. "carries none", s), 2)
    end
    used = stages.from_features(features)
  else
    used = stages.detect(code)
  end
  local allowed = set_of(stage.allowed)
  local forbidden, missing = {}, {}
  for _, tech in ipairs(stages.list(used)) do
    if not allowed[tech] then forbidden[#forbidden + 1] = tech end
  end
  local enforce = opts.enforce_introduced
  if enforce == nil then enforce = stage.enforce_introduced end
  if stage.introduces and not used[stage.introduces] then missing[1] = stage.introduces end
  local ok = #forbidden == 0 and not (enforce and #missing > 0)
  local message
  if #forbidden > 0 then
    message = string.format("stage %d forbids %s", s, table.concat(forbidden, ", "))
  elseif not ok then
    message = string.format("stage %d requires %s", s, table.concat(missing, ", "))
  end
  local beyond
  if opts.isa and used.simd then
    local bits = stages.vector_bits(used.simd)
    if bits > stages.isa(opts.isa).width then beyond = bits end
  end
  return {ok = ok, stage = s, detector = detector, used = stages.list(used),
          forbidden = forbidden, missing = missing, message = message, isa = opts.isa,
          beyond_isa = beyond}
end
function stages.check(s, code, features, opts) return check_in(stages, s, code, features, opts) end

-- The lowest stage whose allowed set covers a technique list (for reports).
local function lowest_for_in(L, techniques)
  for s = 1, #L.table do
    local allowed, fits = set_of(L.table[s].allowed), true
    for _, tech in ipairs(techniques) do
      if not allowed[tech] then fits = false end
    end
    if fits then return s end
  end
  return nil
end
function stages.lowest_for(techniques) return lowest_for_in(stages, techniques) end

-- A ladder over `techniques` (Table I keys; others are ignored), as described above.
local ladders = {}
function stages.ladder(techniques)
  local mine = set_of(techniques or {})
  local order = {}
  for _, tech in ipairs(stages.techniques) do
    if mine[tech] then order[#order + 1] = tech end
  end
  local key = table.concat(order, ",")
  if ladders[key] then return ladders[key] end
  local tbl = {{allowed = {}, introduces = nil, detector = "regex"}}
  for j = 1, #order do
    local allowed = {}
    for i = 1, j do allowed[i] = order[i] end
    if j == #order then allowed = {table.unpack(stages.techniques)} end  -- the last: all five
    tbl[j + 1] = {allowed = allowed, introduces = order[j], detector = "regex"}
  end
  local L = setmetatable({table = tbl, count = #tbl, own_techniques = order}, {__index = stages})
  L.get = function(s) return get_in(L, s) end
  L.forbidden = function(s) return forbidden_in(L, s) end
  L.describe = function(s, isa) return describe_in(L, s, isa) end
  L.detector = function(s, features, override) return detector_in(L, s, features, override) end
  L.check = function(s, code, features, opts) return check_in(L, s, code, features, opts) end
  L.lowest_for = function(list) return lowest_for_in(L, list) end
  ladders[key] = L
  return L
end

-- The ladder of a task: Table I itself for matmul (or no task), else its spec's techniques.
-- `task` is a spec (bench.task(name)) or a task name.
function stages.for_task(task)
  if task == nil or task == "matmul" then return stages end
  local spec = type(task) == "table" and task or require("engine.tasks").get(task)
  if spec.name == "matmul" then return stages end
  return stages.ladder(spec.techniques)
end

return stages
