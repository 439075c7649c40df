-- The defects of synthetic kernels (kernelgen): which exist, what the engine reports for
-- each, the text defects (syntax slips, applied to a rendered kernel), and error messages
-- shaped like the engine's for repair prompts. The defects placed while rendering (bounds,
-- remainders, initialisation, races, endless loops) live in kernelgen/render.lua as sites.
--
--   local defects = require "kernelgen.defects"
--   defects.table.race.expect         -- {"verification_error"}
--   local lines, message = defects.text.missing_semicolon(rng, lines)
--   defects.message(rng, kernel, task)

local render = require "kernelgen.render"
local set_of = render.set_of

local defects = {}
local ISA = render.ISA

---------------------------------------------------------------------------------------
-- Defects
---------------------------------------------------------------------------------------

-- name -> statuses the engine gives (the first is the usual one), and the share among
-- random defects.
defects.table = {
  missing_semicolon = {expect = {"compile_error"}, weight = 3},
  missing_brace = {expect = {"compile_error"}, weight = 1.5},
  undeclared_variable = {expect = {"compile_error"}, weight = 2},
  wrong_intrinsic = {expect = {"compile_error"}, weight = 1.5},
  off_by_one = {expect = {"runtime_error", "verification_error"}, weight = 2},
  missing_remainder = {expect = {"verification_error"}, weight = 2.5, odd_sizes = true},
  missing_c_init = {expect = {"verification_error"}, weight = 1.5, c_init_nan = true},
  stale_accumulator = {expect = {"verification_error"}, weight = 1.5},
  race = {expect = {"verification_error"}, weight = 2, may_pass = true},  -- see defects.race_site
  endless_loop = {expect = {"timeout"}, weight = 0.3, odd_sizes = true},
}
defects.names = {}
for name in pairs(defects.table) do defects.names[#defects.names + 1] = name end
table.sort(defects.names)

defects.at_sites = {off_by_one = true, missing_remainder = true, missing_c_init = true,
                      stale_accumulator = true, race = true, endless_loop = true}

-- A race has two kinds of sites: `#pragma omp parallel` without its `for` in a kernel that
-- adds into C ("race_for": every thread adds the whole product, C ends about twice too
-- large: the benchmark sees it), else a temporary of a parallel loop declared before it
-- ("race": shared by the threads; the compiler often keeps it in a register, so such a
-- race mostly passes). The render site to use, given the counts of a render.
function defects.race_site(count)
  if (count.race_for or 0) > 0 then return "race_for" end
  return "race"
end

local decl_types = {double = true, int = true, __m512d = true, __m256d = true, __mmask8 = true,
                    const = true}

-- Text defects: each returns the new lines and the engine-shaped message, or nil when
-- the kernel has no place for it.
defects.text = {}

local function loc(line, col, msg) return string.format("kernel.c:%d:%d: error: %s", line, col, msg) end

-- Code lines (not preprocessor, not comments), with their index.
local function code_lines(lines)
  local out = {}
  for i, l in ipairs(lines) do
    if not l:match("^%s*#") and not l:match("^%s*/[/*]") and l:match("%S") then out[#out + 1] = i end
  end
  return out
end

function defects.text.missing_semicolon(rng, lines)
  local cands = {}
  for _, i in ipairs(code_lines(lines)) do
    local l = lines[i]
    local nextl = lines[i + 1]
    if l:match(";%s*$") and not l:match("^%s*for") and nextl and not nextl:match("^%s*#") then
      cands[#cands + 1] = i
    end
  end
  if #cands == 0 then return nil end
  local i = rng:pick(cands)
  local out = {table.unpack(lines)}
  out[i] = lines[i]:gsub(";%s*$", "")
  local nxt = lines[i + 1]
  local col = #nxt:match("^%s*") + 1
  local first = nxt:match("^%s*(%S)")
  local word = nxt:match("^%s*([%a_][%w_]*)")
  local msg
  if first == "}" then
    msg = loc(i, #out[i] + 1, "expected ';' before '}' token")
  else
    local lead = out[i]:match("^%s*([%a_][%w_]*)")
    local tok = word or first
    if decl_types[lead] then msg = loc(i + 1, col, "expected ',' or ';' before '" .. tok .. "'")
    else msg = loc(i, #out[i] + 1, "expected ';' before '" .. tok .. "'") end
  end
  return out, msg
end

function defects.text.missing_brace(rng, lines)
  local cands, sig = {}, nil
  for i, l in ipairs(lines) do
    if l:match("^%s*}%s*$") and i < #lines then cands[#cands + 1] = i end
    if not sig and l:find("matmul_optimized", 1, true) then sig = i end
  end
  if #cands == 0 then return nil end
  local i = rng:pick(cands)
  local out = {table.unpack(lines)}
  table.remove(out, i)
  return out, loc(sig, #lines[sig], "expected '}' at end of input")
end

local keywords = set_of({"for", "int", "double", "if", "const", "void", "return", "sizeof", "size_t",
                         "char", "A", "B", "C", "M", "N", "K", "m", "__mmask8", "__m512d", "__m256d"})

function defects.text.undeclared_variable(rng, lines)
  local code = table.concat(lines, "\n")
  local declared = {}
  for _, l in ipairs(lines) do
    local lead = l:match("^%s*([%a_][%w_]*)")
    if decl_types[lead] then
      local body = l:gsub("^%s*const%s+", ""):gsub("^%s*[%a_][%w_]*%s+", "")
      declared[body:match("^([%a_][%w_]*)") or ""] = true
      for name in body:gmatch(",%s*([%a_][%w_]*)%s*=") do declared[name] = true end
    end
    for name in l:gmatch("for%s*%(%s*int%s+([%a_][%w_]*)") do declared[name] = true end
  end
  local cands = {}
  for _, i in ipairs(code_lines(lines)) do
    local l = lines[i]
    local pos = 1
    while true do
      local s, e, name = l:find("([%a_][%w_]*)", pos)
      if not s then break end
      local before = l:sub(1, s - 1)
      local is_decl = (before:match("[%a_][%w_]*%s+$") and decl_types[before:match("([%a_][%w_]*)%s+$")])
        or (before:match(",%s*$") and l:sub(e + 1):match("^%s*=[^=]"))
      if declared[name] and not keywords[name] and not is_decl and l:sub(s - 1, s - 1) ~= "." then
        cands[#cands + 1] = {i, s, e, name}
      end
      pos = e + 1
    end
  end
  if #cands == 0 then return nil end
  local c = rng:pick(cands)
  local name = c[4]
  local variants = {}
  local tries = {name .. "s", name .. "_", name:upper(), name:sub(1, 1) .. name}
  if #name > 2 then tries[#tries + 1] = name:sub(1, -2) end
  for _, v in ipairs(tries) do
    if v ~= name and not code:find("%f[%w_]" .. v:gsub("%p", "%%%0") .. "%f[^%w_]") then
      variants[#variants + 1] = v
    end
  end
  if #variants == 0 then return nil end
  local typo = rng:pick(variants)
  local out = {table.unpack(lines)}
  local l = lines[c[1]]
  out[c[1]] = l:sub(1, c[2] - 1) .. typo .. l:sub(c[3] + 1)
  return out, loc(c[1], c[2], "'" .. typo .. "' undeclared (first use in this function)")
end

local intrinsic_slips = {
  fmadd_pd = {"fmad_pd", "fmaddd_pd", "madd_pd"},
  loadu_pd = {"loadu_sd", "load_upd", "loadup_pd"},
  set1_pd = {"set1_sd", "set_1pd", "broadcast_pd"},
  setzero_pd = {"setzeros_pd", "zero_pd", "setzero"},
  maskz_loadu_pd = {"maskz_load_upd", "maskz_loadu"},
  add_pd = {"addd_pd", "add_p"},
}

function defects.text.wrong_intrinsic(rng, lines)
  local cands = {}
  for _, i in ipairs(code_lines(lines)) do
    local l = lines[i]
    local s = l:find("=%s*_mm%d+_[%w_]+%s*%(")
    if s and l:sub(s - 1, s - 1) ~= "=" and l:sub(s - 1, s - 1) ~= "<" then
      local fs, fe, isa, op = l:find("(_mm%d+)_([%w_]+)", s)
      if intrinsic_slips[op] then cands[#cands + 1] = {i, s, fs, fe, isa, op} end
    end
  end
  if #cands == 0 then return nil end
  local c = rng:pick(cands)
  local l = lines[c[1]]
  local slip = c[5] .. "_" .. rng:pick(intrinsic_slips[c[6]])
  local out = {table.unpack(lines)}
  out[c[1]] = l:sub(1, c[3] - 1) .. slip .. l:sub(c[4] + 1)
  local vec = c[5] == "_mm512" and ISA.avx512.vec or ISA.avx2.vec
  local lead = l:match("^%s*([%a_][%w_]*)")
  local msg
  if decl_types[lead] then
    msg = loc(c[1], c[3], "incompatible types when initializing to type '" .. vec .. "' from type 'int'")
  else
    msg = loc(c[1], c[2], "incompatible types when assigning to type '" .. vec .. "' from type 'int'")
  end
  return out, msg
end

-- Which defects a kernel admits (counting sites in a render without a defect).
function defects.applicable(p, e)
  local ok = {}
  for name in pairs(defects.table) do
    if name == "race" then ok[name] = (e.count.race or 0) + (e.count.race_for or 0) > 0
    elseif defects.at_sites[name] then ok[name] = (e.count[name] or 0) > 0
    elseif name == "wrong_intrinsic" then ok[name] = p.tech.simd == true
    else ok[name] = true end
  end
  return ok
end

---------------------------------------------------------------------------------------
-- Error messages shaped like the engine's, for repair prompts.
---------------------------------------------------------------------------------------

local function value(rng, K) return K * 0.25 * (0.92 + 0.16 * rng:uniform()) end

local function wrong(rng, i, j, got, want)
  local rel = want ~= 0 and math.abs(got - want) / math.abs(want) or math.abs(got)
  return string.format("wrong result: C[%d][%d] = %.17g, expected %.17g (relative error %.3g > 1e-06)",
                       i, j, got, want, rel)
end

-- A guard page's address, as a fault past the end of an input reports it.
local function address(rng) return string.format("0x7f%02x%05x000", rng:int(0x10, 0xff), rng:int(0, 0xfffff)) end

-- The message the engine would give for kernel k (defective) on task.
function defects.message(rng, k, task)
  task = task or {}
  local M, N, K = task.M or 256, task.N or 256, task.K or 256
  local d = k.defect
  if not d then return nil end
  if k.compile_message then return k.compile_message end
  local omp = k.params.omp ~= nil
  if d == "off_by_one" then
    if rng:chance(0.7) then
      local where = (omp and rng:chance(0.5)) and " (in an OpenMP thread)" or ""
      return string.format("the kernel accessed %d bytes past the end of %s%s (SIGSEGV at %s)",
                           rng:int(1, 64) * 8, rng:pick({"B", "B", "A"}), where, address(rng))
    end
    local want = value(rng, K)
    return wrong(rng, 0, 0, want + rng:uniform() * 0.9 + 0.05, want)
  elseif d == "missing_remainder" then
    local dim = k.defect_detail
    local i, j = 0, 0
    if dim == "i" then i = M - 1 elseif dim == "j" then j = N - 1 end
    local want = value(rng, K)
    local got = dim == "k" and want - (0.05 + rng:uniform() * 0.9) or 0
    return wrong(rng, i, j, got, want)
  elseif d == "missing_c_init" then
    return string.format("wrong result: C[0][0] = nan, expected %.17g (relative error inf > 1e-06)", value(rng, K))
  elseif d == "stale_accumulator" then
    local dim = k.defect_detail
    local i, j = 0, N - 1
    if dim == "i" then i, j = M - 1, 0 end
    local want = value(rng, K)
    return wrong(rng, i, j, want * (dim == "i" and M or N) * (0.9 + 0.2 * rng:uniform()), want)
  elseif d == "race" and k.defect_detail == "for" then
    local want = value(rng, K)
    return wrong(rng, 0, 0, want * (1.7 + 0.3 * rng:uniform()), want)
  elseif d == "race" then
    local want = value(rng, K)
    return wrong(rng, rng:int(0, M - 1), rng:int(0, N - 1), want * (0.5 + 0.45 * rng:uniform()), want)
  elseif d == "endless_loop" then
    return string.format("the kernel ran longer than the %g s limit (warm-up and timed runs; killed)",
                         task.timeout or 8)
  end
  return "the kernel failed"
end

return defects
