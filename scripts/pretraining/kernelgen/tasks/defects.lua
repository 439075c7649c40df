-- Defects of the task suite's kernels (kernelgen.tasks' "repair" examples): placed by text
-- on a correct generated kernel, each with the status the engine gives and a message of
-- the engine's shape (a wrong result names the task's output, at an index for the
-- prompt's size).
--
--   local td = require "kernelgen.tasks.defects"
--   local bad = td.inject(rng, code, "random")   -- nil: no site for that defect
--   bad.code, bad.defect, bad.expect, bad.compile_message
--   local size = td.odd_size(rng, spec)          -- for the defects that need one
--   td.message(rng, bad, spec, size)
--
-- The syntax slips are kernelgen.defects.text's (missing_semicolon, undeclared_variable,
-- wrong_intrinsic), with the declarations of `long` and the macro _mm_prefetch placed as
-- the compiler places them; missing_brace drops a lone `}`. Semantic ones, both caught
-- at verification: missing_remainder drops the scalar loop after a strided one (wrong
-- where a size is not a multiple of the step: such examples name an odd size), and
-- off_by_one starts a unit-step loop at 1 instead of 0 (never out of bounds, so the
-- first element or term is lost instead of a fault the buffers' slack may hide).

local kdefects = require "kernelgen.defects"
local etasks = require "engine.tasks"

local M = {}

-- name -> the status the engine gives, the share among random defects, whether the prompt
-- must name sizes that are not multiples of a vector or unroll step.
M.table = {
  missing_semicolon = {expect = "compile_error", weight = 3},
  missing_brace = {expect = "compile_error", weight = 1.5},
  undeclared_variable = {expect = "compile_error", weight = 2},
  wrong_intrinsic = {expect = "compile_error", weight = 1.5},
  missing_remainder = {expect = "verification_error", weight = 3, odd_sizes = true},
  off_by_one = {expect = "verification_error", weight = 2.5},
}
M.names = {}
for name in pairs(M.table) do M.names[#M.names + 1] = name end
table.sort(M.names)

local function lines_of(code)
  local out = {}
  for l in code:gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end
local function text_of(lines) return table.concat(lines, "\n") .. "\n" end

local function loc(line, col, msg) return string.format("kernel.c:%d:%d: error: %s", line, col, msg) end

-- The first line two lists differ at.
local function changed(a, b)
  for i = 1, math.max(#a, #b) do if a[i] ~= b[i] then return i end end
end

-- Types the kernels declare with that kernelgen.defects does not read as declarations.
local more_types = {long = true, size_t = true, unsigned = true, float = true, char = true}

---------------------------------------------------------------------------------------
-- Syntax slips
---------------------------------------------------------------------------------------

local slips = {}

function slips.missing_semicolon(rng, lines)
  local out, msg = kdefects.text.missing_semicolon(rng, lines)
  if not out then return nil end
  local i = changed(lines, out)
  local nxt = lines[i + 1]
  local first = nxt:match("^%s*(%S)")
  local tok = nxt:match("^%s*([%a_][%w_]*)") or first
  if more_types[out[i]:match("^%s*([%a_][%w_]*)")] and first ~= "}" then
    msg = loc(i + 1, #nxt:match("^%s*") + 1, "expected ',' or ';' before '" .. tok .. "'")
  elseif out[i]:match("^%s*_mm_prefetch%s*%(") then
    -- a macro: the error is placed inside its expansion, a column into the name
    msg = loc(i, #out[i]:match("^%s*") + 2, msg:match("error: (.*)$"))
  end
  return out, msg
end

-- A typo in a use of a local; never in its declaration (that would move the error to
-- the first use of the real name).
function slips.undeclared_variable(rng, lines)
  for _ = 1, 8 do
    local out, msg = kdefects.text.undeclared_variable(rng, lines)
    if not out then return nil end
    local i = changed(lines, out)
    local col = tonumber(msg:match("^kernel%.c:%d+:(%d+):"))
    local before = lines[i]:sub(1, col - 1)
    if not more_types[before:match("([%a_][%w_]*)%s*%**%s*$") or ""] then
      if lines[i]:match("^%s*_mm_prefetch%s*%(") then  -- in a macro's arguments: placed at its name
        msg = msg:gsub("^(kernel%.c:%d+:)%d+", "%1" .. (#lines[i]:match("^%s*") + 1))
      end
      return out, msg
    end
  end
  return nil
end

slips.wrong_intrinsic = kdefects.text.wrong_intrinsic

-- A lone `}` of the entry function (the last one) dropped: the compiler names the `{`
-- left open at the end of the file. (In a helper before it, the entry would be nested.)
function slips.missing_brace(rng, lines)
  local cands, depth, entry = {}, 0, nil
  for i, l in ipairs(lines) do
    if depth == 0 and l:find("{", 1, true) then entry = i end
    depth = depth + select(2, l:gsub("{", "")) - select(2, l:gsub("}", ""))
  end
  for i, l in ipairs(lines) do
    if entry and i > entry and l:match("^%s*}%s*$") and i < #lines then cands[#cands + 1] = i end
  end
  if #cands == 0 then return nil end
  local out = {table.unpack(lines)}
  table.remove(out, rng:pick(cands))
  local open = {}
  for i, l in ipairs(out) do
    for col, c in l:gmatch("()([{}])") do
      if c == "{" then open[#open + 1] = {i, col} else open[#open] = nil end
    end
  end
  local at = open[#open]
  if not at then return nil end
  return out, loc(at[1], at[2], "expected '}' at end of input")
end

---------------------------------------------------------------------------------------
-- Semantic defects, found from the loop headers
---------------------------------------------------------------------------------------

-- A `for` header: {var, init (its value; nil or "" when empty), cond, unit (a ++ step),
-- stride (the `+= s` step's s)}.
local function header(line)
  local init, cond, step = line:match("^%s*for%s*%(([^;]*);([^;]*);([^%)]*)%)")
  if not init then return nil end
  local var, value = init:match("([%a_][%w_]*)%s*=%s*(.-)%s*$")
  if not var then var = cond:match("^%s*([%a_][%w_]*)") end
  if not var then return nil end
  local e = var:gsub("%p", "%%%0")
  local unit = step:match("^%s*%+%+" .. e .. "%s*$") or step:match("^%s*" .. e .. "%+%+%s*$")
  local stride = step:match("^%s*" .. e .. "%s*%+=%s*([%w_]+)%s*$")
  return {var = var, init = value, cond = cond, unit = unit ~= nil, stride = stride}
end

-- The last line of the loop whose header is lines[h].
local function loop_end(lines, h)
  local tail = lines[h]:match("^%s*for%s*%b()(.*)$") or ""
  local depth = select(2, tail:gsub("{", "")) - select(2, tail:gsub("}", ""))
  if depth > 0 then
    for j = h + 1, #lines do
      depth = depth + select(2, lines[j]:gsub("{", "")) - select(2, lines[j]:gsub("}", ""))
      if depth <= 0 then return j end
    end
    return nil
  end
  if tail:match("%S") then return h end                    -- the body on the header's line
  if lines[h + 1] and lines[h + 1]:match("^%s*for%s*%(") then return loop_end(lines, h + 1) end
  return h + 1
end

-- Whether a loop around lines[h] starts at `bound` (then it is empty where the range
-- ending at `bound` is a partial tile: trsv's rows below a block).
local function enclosed_from(lines, h, bound)
  for g = h - 1, 1, -1 do
    local hd = header(lines[g])
    if hd and hd.init == bound and (loop_end(lines, g) or 0) >= h then return true end
  end
  return false
end

-- A remainder: a unit-step loop over the variable of the strided loop before it, going
-- on from where that one stopped (`for (; j < hi; ...)` after `j + 8 <= hi`, or
-- `for (i = nu; i < n; ...)` after `i < nu; i += 4`), and not dead code. {first, last, step}.
local function remainder_sites(lines)
  local sites, last_strided = {}, {}
  for h, l in ipairs(lines) do
    local hd = header(l)
    if hd and hd.stride then
      last_strided[hd.var] = hd
    elseif hd and hd.unit and last_strided[hd.var] then
      local s = last_strided[hd.var]
      local e = hd.var:gsub("%p", "%%%0")
      local bound = hd.cond:match("^%s*" .. e .. "%s*<%s*(.-)%s*$")
      local step, upto = s.cond:match("^%s*" .. e .. "%s*%+%s*(%d+)%s*<=%s*(.-)%s*$")
      local nu = s.cond:match("^%s*" .. e .. "%s*<%s*([%a_][%w_]*)%s*$")
      if bound and ((upto and upto == bound and (hd.init == nil or hd.init == ""))
                    or (nu and hd.init == nu)) then
        local last = loop_end(lines, h)
        if last and not enclosed_from(lines, h, bound) then
          sites[#sites + 1] = {first = h, last = last, step = tonumber(step or s.stride)}
        end
      end
    end
  end
  return sites
end

-- Unit-step loops from 0.
local function from_zero_sites(lines)
  local sites = {}
  for h, l in ipairs(lines) do
    local hd = header(l)
    if hd and hd.unit and hd.init == "0" and hd.cond:match("^%s*" .. hd.var:gsub("%p", "%%%0") .. "%s*<[^=]") then
      sites[#sites + 1] = {first = h, last = loop_end(lines, h) or h}
    end
  end
  return sites
end

-- How lines first..last write: "assign" (an element set without being read: one they
-- skip keeps its NaN), "update" (an element added to), or nil (only scalars: a sum).
local function writes(lines, site)
  local block = table.concat(lines, "\n", site.first, site.last)
  local kind
  for l in block:gmatch("[^\n]+") do
    local lhs, op, rhs = l:match("([%a_][%w_]*%b[])%s*([%+%-%*/]?)=%s*([^=].*)$")
    if lhs and not rhs:match("^{") then
      if op ~= "" or rhs:find(lhs, 1, true) then kind = "update" else return "assign" end
    end
    local ptr = l:match("_storeu_pd%(%s*([^,]+),")
    if ptr then
      if block:find("_loadu_pd(" .. ptr .. ")", 1, true) then kind = "update" else return "assign" end
    end
  end
  return kind
end

local semantic = {}

function semantic.missing_remainder(rng, lines)
  local sites = remainder_sites(lines)
  if #sites == 0 then return nil end
  local s = rng:pick(sites)
  local out = {}
  for i, l in ipairs(lines) do if i < s.first or i > s.last then out[#out + 1] = l end end
  return out, {step = s.step, writes = writes(lines, s)}
end

function semantic.off_by_one(rng, lines)
  local sites = from_zero_sites(lines)
  if #sites == 0 then return nil end
  local s = rng:pick(sites)
  local out = {table.unpack(lines)}
  out[s.first] = lines[s.first]:gsub("(for%s*%([^;]-=%s*)0(%s*;)", "%11%2", 1)
  return out, {writes = writes(lines, s)}
end

---------------------------------------------------------------------------------------
-- Injection
---------------------------------------------------------------------------------------

local function inject_one(rng, lines, name)
  local f = slips[name]
  if f then
    local out, msg = f(rng, lines)
    if out then return {lines = out, compile_message = msg} end
    return nil
  end
  local out, detail = semantic[name](rng, lines)
  if out then return {lines = out, detail = detail} end
end

-- The kernel `code` with the defect `name` ("random": one it has a site for, by weight):
-- {code, defect, expect, compile_message (compile errors), detail}, or nil.
function M.inject(rng, code, name)
  local lines = lines_of(code)
  local left = {}
  if name == "random" then
    for n, d in pairs(M.table) do left[n] = d.weight end
  elseif M.table[name] then
    left[name] = 1
  else
    error(string.format("kernelgen.tasks.defects: unknown defect '%s' (known: %s)", tostring(name),
                        table.concat(M.names, ", ")), 2)
  end
  while next(left) do
    local n = rng:weighted(left)
    local r = inject_one(rng, lines, n)
    if r then
      return {code = text_of(r.lines), defect = n, expect = M.table[n].expect,
              compile_message = r.compile_message, detail = r.detail}
    end
    left[n] = nil
  end
  return nil
end

---------------------------------------------------------------------------------------
-- Sizes and messages
---------------------------------------------------------------------------------------

-- The train size made odd: each even variable moved by a small odd amount, so that no
-- size is a multiple of a vector, an unroll or a block.
function M.odd_size(rng, spec)
  for _ = 1, 10 do
    local size, vars = {}, {}
    for k in pairs(spec.sizes.train) do vars[#vars + 1] = k end
    table.sort(vars)  -- draws in a fixed order: the corpus regenerates exactly in any process
    for _, k in ipairs(vars) do
      local v = spec.sizes.train[k]
      size[k] = v % 2 == 1 and v or math.max(3, v + rng:pick({-3, -1, 1, 3}))
    end
    if pcall(etasks.resolve_spec, spec, size) then return size end
  end
  return spec.sizes.train
end

local U = 2.0 ^ -53

-- The output the engine checks first: its name, role, length and row length.
local function first_output(spec, size)
  local r, vars = etasks.resolve_spec(spec, size)
  for _, p in ipairs(r.params) do
    if p.role == "out" or p.role == "inout" then
      local count = spec.args[p.name].count
      local last = tostring(count):match("([%a_][%w_]*)%s*$")
      return {name = p.name, role = p.role, count = p.count, row = vars[last] or p.count}, r
    end
  end
  return {name = "the return value", role = "return", count = 1, row = 1}, r
end

-- A plausible reference value: sums of about `terms` products of inputs in [-1, 1].
local function value(rng, terms, positive)
  local v = math.sqrt(math.max(1, terms)) * (0.15 + 0.6 * rng:uniform())
  if positive or rng:chance(0.5) then return v end
  return -v
end

local function wrong(out, idx, got, want, r, scale)
  local where = out.role == "return" and out.name or string.format("%s[%d]", out.name, idx)
  local err = got and math.abs(got - want) or nil
  local bound = r.bound.factor * U * scale
  local why = r.bound.scale == "output" and "times the output's largest magnitude"
    or "times the reference on the inputs' magnitudes"
  return string.format("wrong result in call 1 (warm-up): %s = %s, expected %.17g (error %s > %.3g, the bound %g u %s)",
                       where, got and string.format("%.17g", got) or "nan", want,
                       err and string.format("%.3g", err) or "nan", bound, r.bound.factor, why)
end

-- The engine's message for `bad` (from inject) on the task `spec` at `size` (a name or
-- a table of the spec's variables).
function M.message(rng, bad, spec, size)
  if bad.compile_message then return bad.compile_message end
  local out, r = first_output(spec, size)
  local terms = r.flops / (2 * out.count)
  local want = value(rng, terms, spec.name == "nrm2" or spec.name == "asum")
  local scale = math.abs(want) * (r.bound.scale == "output" and (1.5 + 2 * rng:uniform()) or (1 + rng:uniform()))
  local d = bad.detail or {}
  local idx = 0
  if bad.defect == "missing_remainder" and d.writes then  -- else a sum lost its tail: the first one is off
    local step = d.step or 4
    idx = out.row - out.row % step
    if idx >= out.row then idx = out.row - 1 end
  end
  local got
  if not (out.role == "out" and d.writes == "assign") then  -- an element never written stays NaN
    got = want - value(rng, bad.defect == "off_by_one" and 1 or math.min(terms, 7))
  end
  return wrong(out, idx, got, want, r, scale)
end

return M
