-- A family of the generated universe (universe/families.lua gathers it): signed
-- expressions. What it draws, and in what order, is part of the universe's version.

local common = require "universe.common"
local coefficient, num, const_params, input_args, join = common.coefficient, common.num, common.const_params,
                                                         common.input_args, common.join
local ONE_D, TWO_D = common.ONE_D, common.TWO_D

local family = {}

---------------------------------------------------------------------------------------
-- Signed expressions (version 7): differences, signed coefficients, squares of
-- differences, ReLU, clamps and absolute values, which the positive polynomials above never
-- show. The reference on the inputs' magnitudes no longer bounds their terms (a - b on |a|,
-- |b| may vanish), so these are checked against the output's largest entry, and an
-- expression is kept only where that entry is large next to its terms (spread).
---------------------------------------------------------------------------------------

local function signed_coefficient(rng)
  return rng:chance(0.5) and -coefficient(rng) or coefficient(rng)
end

-- An expression tree: {op = "in", name =}, {op = "sub" | "mul", l, r}, {op = "sq", e},
-- {op = "lin", terms = {{coef =, e =}}, constant =}, {op = "relu" | "abs", e},
-- {op = "clamp", e, lo =, hi =}. Inputs are named abstractly and rendered through `at`
-- (name -> its element as text: "a[i]", "A[i][j]", "Ar[j]").
local function input(name) return {op = "in", name = name} end

local say
-- e as a factor of a product: a sum in parentheses.
local function factor(e, at, words)
  local s = say(e, at, words)
  return (e.op == "sub" or e.op == "lin") and ("(" .. s .. ")") or s
end

-- e as C (words false) or in words (words true: max, min, |.| and ^2).
function say(e, at, words)
  local op = e.op
  if op == "in" then return at[e.name] end
  if op == "sub" then return say(e[1], at, words) .. " - " .. factor(e[2], at, words) end
  if op == "mul" then return factor(e[1], at, words) .. " * " .. factor(e[2], at, words) end
  if op == "sq" then
    local f = factor(e[1], at, words)
    return words and (f .. "^2") or (f .. " * " .. f)
  end
  if op == "relu" then return (words and "max(0, %s)" or "fmax(0.0, %s)"):format(say(e[1], at, words)) end
  if op == "abs" then return (words and "|%s|" or "fabs(%s)"):format(say(e[1], at, words)) end
  if op == "clamp" then
    return (words and "min(max(%s, %s), %s)" or "fmin(fmax(%s, %s), %s)"):format(say(e[1], at, words), num(e.lo),
                                                                                  num(e.hi))
  end
  local s = ""
  for k, t in ipairs(e.terms) do
    local size = math.abs(t.coef)
    local body = size == 1 and factor(t.e, at, words) or (num(size) .. " * " .. factor(t.e, at, words))
    if k == 1 then s = (t.coef < 0 and "-" or "") .. body
    else s = s .. (t.coef < 0 and " - " or " + ") .. body end
  end
  if e.constant then s = s .. (e.constant < 0 and " - " or " + ") .. num(math.abs(e.constant)) end
  return s
end

-- Its value at the inputs v (name -> number).
local function value(e, v)
  local op = e.op
  if op == "in" then return v[e.name] end
  if op == "sub" then return value(e[1], v) - value(e[2], v) end
  if op == "mul" then return value(e[1], v) * value(e[2], v) end
  if op == "sq" then local x = value(e[1], v); return x * x end
  if op == "relu" then return math.max(0, value(e[1], v)) end
  if op == "abs" then return math.abs(value(e[1], v)) end
  if op == "clamp" then return math.min(math.max(value(e[1], v), e.lo), e.hi) end
  local s = e.constant or 0
  for _, t in ipairs(e.terms) do s = s + t.coef * value(t.e, v) end
  return s
end

-- The sum of its terms' magnitudes where every input is 1 in magnitude (its largest for
-- inputs in [-1, 1)); through fmax, fmin and fabs, their argument's: an error in it passes
-- through them no larger.
local function magnitude(e)
  local op = e.op
  if op == "in" then return 1 end
  if op == "sub" then return magnitude(e[1]) + magnitude(e[2]) end
  if op == "mul" then return magnitude(e[1]) * magnitude(e[2]) end
  if op == "sq" then return magnitude(e[1]) ^ 2 end
  if op == "relu" or op == "abs" or op == "clamp" then return magnitude(e[1]) end
  local s = math.abs(e.constant or 0)
  for _, t in ipairs(e.terms) do s = s + math.abs(t.coef) * magnitude(t.e) end
  return s
end

-- Its roundings (a square's argument counted twice: both factors carry its error), and
-- its calls of fmax, fmin and fabs (exact).
local function roundings(e)
  local op = e.op
  if op == "in" then return 0, 0 end
  if op == "sub" or op == "mul" then
    local a, b = roundings(e[1])
    local c, d = roundings(e[2])
    return a + c + 1, b + d
  end
  if op == "sq" then local a, b = roundings(e[1]); return 2 * a + 1, b end
  if op == "relu" or op == "abs" or op == "clamp" then
    local a, b = roundings(e[1])
    return a, b + (op == "clamp" and 2 or 1)
  end
  local n, calls = #e.terms - 1 + (e.constant and 1 or 0), 0
  for _, t in ipairs(e.terms) do
    local a, b = roundings(t.e)
    n, calls = n + a + (math.abs(t.coef) ~= 1 and 1 or 0), calls + b
  end
  return n, calls
end

-- An atom over one or two inputs: an input, a difference, a product or a square (of a
-- difference where there are two).
local function atom(rng, inputs)
  local a, b = inputs[1], inputs[2]
  local kind = rng:int(1, 4)
  if b and rng:chance(0.5) then a, b = b, a end
  if kind == 2 and b then return {op = "sub", input(a), input(b)} end
  if kind == 3 then return {op = "mul", input(rng:pick(inputs)), input(rng:pick(inputs))} end
  if kind == 4 then return {op = "sq", b and {op = "sub", input(a), input(b)} or input(a)} end
  return input(rng:pick(inputs))
end

-- A signed sum of one to three distinct atoms (none another's multiple, every input in
-- it), now and then with a constant.
local function signed_sum(rng, inputs)
  local terms, used, seen = {}, {}, {}
  local function note(e)
    if e.op == "in" then used[e.name] = true end
    for _, c in ipairs(e) do note(c) end
  end
  for _ = 1, rng:int(1, 3) do
    local coef = rng:chance(0.25) and (rng:chance(0.5) and -1 or 1) or signed_coefficient(rng)
    local e = atom(rng, inputs)
    -- an atom by its magnitudes at two points: a - b and b - a, a * a and a^2 are one
    local key = string.format("%.12g %.12g", math.abs(value(e, {a = 0.3, b = 0.7})),
                              math.abs(value(e, {a = 0.9, b = -0.2})))
    if not seen[key] then
      seen[key] = true
      terms[#terms + 1] = {coef = coef, e = e}
      note(e)
    end
  end
  for _, name in ipairs(inputs) do
    if not used[name] then terms[#terms + 1] = {coef = signed_coefficient(rng), e = input(name)} end
  end
  return {op = "lin", terms = terms, constant = rng:chance(0.25) and signed_coefficient(rng) or nil}
end

-- e under `wrap`: none, relu, abs, clamp (to drawn bounds around 0), clamp0 (to [0, hi])
-- or square.
local function wrapped(rng, wrap, e)
  if wrap == "relu" or wrap == "abs" then return {op = wrap, e} end
  if wrap == "square" then return {op = "sq", e} end
  if wrap == "clamp" then return {op = "clamp", e, lo = -rng:int(4, 32) / 16, hi = rng:int(4, 32) / 16} end
  if wrap == "clamp0" then return {op = "clamp", e, lo = 0, hi = rng:int(4, 32) / 16} end
  return e
end

-- Fixed points in [-1, 1)^3, the inputs' draw, where a drawn expression is tried.
local SAMPLES
local function samples()
  if not SAMPLES then
    local r = require("engine.rng").new("universe signed samples")
    SAMPLES = {}
    for k = 1, 2048 do SAMPLES[k] = {2 * r:uniform() - 1, 2 * r:uniform() - 1, 2 * r:uniform() - 1} end
  end
  return SAMPLES
end

-- The least q of 4, 8, 16, 32, 64 with |e| >= magnitude / q at 45% of the sample points
-- (inputs `names` taking their coordinates), or nil: what lets a bound of the output's
-- largest entry stand for one of the terms' magnitudes.
local function spread(e, names)
  local values = {}
  for k, p in ipairs(samples()) do
    local v = {}
    for c, name in ipairs(names) do v[name] = p[c] end
    values[k] = math.abs(value(e, v))
  end
  table.sort(values, function(x, y) return x > y end)
  local reached = values[math.ceil(0.45 * #values)]
  local K = magnitude(e)
  for _, q in ipairs({4, 8, 16, 32, 64}) do
    if reached >= K / q then return q end
  end
end

-- Whether a ReLU, an absolute value or a clamp in e changes its argument at fewer than a
-- tenth of the sample points or at more than nine tenths: one that hardly acts (a ReLU of
-- a square) or nearly always does (a clamp below its argument's least value: a constant)
-- says nothing.
local function idle(e, names)
  if e.op == "lin" then
    for _, t in ipairs(e.terms) do if idle(t.e, names) then return true end end
    return false
  end
  if e.op ~= "relu" and e.op ~= "abs" and e.op ~= "clamp" then return false end
  local acts = 0
  for _, p in ipairs(samples()) do
    local v = {}
    for c, name in ipairs(names) do v[name] = p[c] end
    if value(e, v) ~= value(e[1], v) then acts = acts + 1 end
  end
  return acts < 0.1 * #samples() or acts > 0.9 * #samples()
end

-- Draws `make` (a function giving an expression over `names`) until it computes something
-- (not an input or its negation alone), its functions act and its spread is bounded:
-- (expression, q).
local function spread_draw(rng, names, make)
  for _ = 1, 50 do
    local e = make()
    local ops, calls = roundings(e)
    local q = ops + calls > 0 and not idle(e, names) and spread(e, names)
    if q then return e, q end
  end
  error("signed: no expression with a bounded spread in 50 draws")
end

-- The note a statement in words needs for the functions it uses.
local function functions_note(text, words)
  if words then
    local parts = {}
    if text:find("max%(") or text:find("min%(") then parts[#parts + 1] = "max and min take the larger and the smaller of their arguments" end
    if text:find("|") then parts[#parts + 1] = "|v| is the absolute value of v" end
    if text:find("%^2") then parts[#parts + 1] = "v^2 = v * v" end
    return #parts > 0 and (" (" .. join(parts, "; ") .. ")") or ""
  end
  return (text:find("fmax") or text:find("fmin") or text:find("fabs")) and " (fmax, fmin and fabs as in C's <math.h>)" or ""
end

local SIGNED_KINDS = {"elementwise", "elementwise", "rows", "rows", "stencil"}

-- The part of a signed task's bound that says why its output's largest entry is large.
local function spread_why(K, q, what)
  return string.format("The draw keeps an expression only where its magnitude reaches %s/%d (%s: the most its "
                       .. "terms' magnitudes sum to for inputs in [-1, 1)) at 45%% of 2048 fixed sample inputs, so "
                       .. "with probability above 0.4 at a drawn input; %s", num(K), q, num(K), what)
end

function family.signed(rng)
  local kind = rng:pick(SIGNED_KINDS)
  local words = rng:chance(0.5)  -- the statement's functions as max, min, |.|, or C's
  local count = rng:int(1, 2)
  local names = count == 2 and {"a", "b"} or {"a"}
  local args, proto, statement, reference, optimised, flops, bytes, bound, sizes
  if kind == "elementwise" then
    local wrap = rng:pick({"none", "relu", "clamp", "abs"})
    local e, q = spread_draw(rng, names, function()
      local f = wrapped(rng, wrap, signed_sum(rng, names))
      if wrap ~= "none" and rng:chance(0.35) then
        f = {op = "lin", terms = {{coef = 1, e = f}, {coef = signed_coefficient(rng), e = atom(rng, names)}}}
      end
      return f
    end)
    local at = {a = "a[i]", b = "b[i]"}
    local text, c = say(e, at, words), say(e, at, false)
    local ops, calls = roundings(e)
    local K = magnitude(e)
    proto = string.format("void NAME(int n, %s, double *y)", const_params(names))
    args = input_args(names, "n")
    args.n, args.y = {value = "n"}, {count = "n"}
    statement = string.format("Compute y[i] = %s for 0 <= i < n%s.", text, functions_note(text, words))
    reference = string.format("#include <math.h>\n%s {\n  for (int i = 0; i < n; ++i) y[i] = %s;\n}\n", proto, c)
    optimised = string.format("#include <math.h>\n%s {\n#pragma omp parallel for simd schedule(static)\n"
                              .. "  for (long i = 0; i < n; ++i) y[i] = %s;\n}\n", proto, c)
    local n = rng:pick(ONE_D)
    sizes = {train = {n = n}, heldout = {n = n + 13}, test = {n = 203}}
    flops, bytes = (ops + calls) .. "*n", string.format("8*%d*n", count + 1)
    bound = {factor = 2 * (ops + 2) * q, scale = "output", why = string.format("each y[i] takes %d roundings (fmax, "
             .. "fmin and fabs are exact and pass an error on no larger): in any order, with or without FMA, it errs "
             .. "by at most %d u times its terms' magnitudes' sum, at most %s. %s", ops, ops + 2, num(K),
             spread_why(K, q, string.format("the outputs are independent, so at n >= 203 all fall below %s/%d with "
             .. "probability under 0.6^203: %d u of the output's largest entry bounds the error, the reference's as "
             .. "large again. Single precision errs by 2^-24 relative.", num(K), q, (ops + 2) * q)))}
  elseif kind == "rows" then
    -- y[i] = alpha * the sum of a nonnegative g over row i: the sum's roundings are
    -- relative to y[i] itself, and g's own are bounded as an elementwise expression's
    local wrap = rng:pick({"relu", "abs", "square", "clamp0"})
    local g, q = spread_draw(rng, names, function() return wrapped(rng, wrap, signed_sum(rng, names)) end)
    local alpha = rng:chance(0.3) and coefficient(rng) or nil
    local scaled = alpha and (num(alpha) .. " * ") or ""
    local ops, calls = roundings(g)
    local K = magnitude(g)
    local mats = count == 2 and {"A", "B"} or {"A"}
    local text = say(g, {a = "A[i][j]", b = "B[i][j]"}, words)
    local c = say(g, {a = "A[(long)i * n + j]", b = "B[(long)i * n + j]"}, false)
    local cfast = say(g, {a = "Ar[j]", b = "Br[j]"}, false)
    proto = string.format("void NAME(int m, int n, %s, double *y)", const_params(mats))
    args = {m = {value = "m"}, n = {value = "n"}, A = {count = "m * n"}, y = {count = "m"}}
    if count == 2 then args.B = {count = "m * n"} end
    local sum = "sum over 0 <= j < n of " .. text
    statement = string.format("%s, stored row-major (A[i][j] at A[i*n + j]%s). Compute y[i] = %s for 0 <= i < m%s.",
                              count == 2 and "A and B are m x n matrices" or "A is an m x n matrix",
                              count == 2 and ", B likewise" or "", alpha and (scaled .. "(" .. sum .. ")") or sum,
                              functions_note(text, words))
    reference = string.format("#include <math.h>\n%s {\n  for (int i = 0; i < m; ++i) {\n    double s = 0;\n"
                              .. "    for (int j = 0; j < n; ++j) s += %s;\n    y[i] = %ss;\n  }\n}\n", proto, c, scaled)
    optimised = string.format([[#include <math.h>
%s {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < m; ++i) {
    const double *Ar = A + i * n;%s
    double s = 0;
#pragma omp simd reduction(+:s)
    for (long j = 0; j < n; ++j) s += %s;
    y[i] = %ss;
  }
}
]], proto, count == 2 and "\n    const double *Br = B + i * n;" or "", cfast, scaled)
    local mn = rng:pick(TWO_D)
    sizes = {train = {m = mn[1], n = mn[2]}, heldout = {m = mn[1] + 7, n = mn[2] + 9}, test = {m = 13, n = 37}}
    flops = (ops + calls + 1) .. "*m*n" .. (alpha and " + m" or "")
    bytes = string.format("8*(%d*m*n + m)", count)
    local inner = 8 * q * (ops + 2)
    bound = {factor = string.format("2*n + %d", inner + 2), scale = "output", why = string.format("every term "
             .. "summed is at least 0 (%s), so the sum of n of them errs in any order by at most n u times y[i] "
             .. "itself (one u more for the scale), and each term's %d roundings by at most %d u times %s (fmax, fmin "
             .. "and fabs are exact and pass an error on no larger). %s", wrap == "square" and "a square"
             or wrap == "abs" and "an absolute value" or "clamped below at 0", ops, ops + 2, num(K),
             spread_why(K, q, string.format("a row's count of terms above %s/%d is binomial, at least n/4 in some row "
             .. "but with probability below 1e-18 at m = 13, n = 37 and less at larger sizes, so the largest y[i] is at "
             .. "least n/4 times %s/%d (times the scale) and the terms' errors, n times %d u %s, are at most %d u of "
             .. "it: 2n + %d u of the output's largest entry, kernel and reference together. Single precision errs "
             .. "by 2^-24 relative.", num(K), q, num(K), q, ops + 2, num(K), inner // 2, inner + 2)))}
  else
    -- a 3-point stencil over the interior with a stated rule at the ends
    local signed = rng:chance(0.6)
    local e, q = spread_draw(rng, {"l", "c", "r"}, function()
      local terms = {}
      for k, name in ipairs({"l", "c", "r"}) do
        terms[k] = {coef = signed and signed_coefficient(rng) or coefficient(rng), e = input(name)}
      end
      return {op = "lin", terms = terms}
    end)
    local ops = roundings(e)
    local K = magnitude(e)
    local text = say(e, {l = "a[i - 1]", c = "a[i]", r = "a[i + 1]"}, false)
    local boundary = rng:pick({"copy", "zero", "constant"})
    local ends, cends
    if boundary == "copy" then
      ends, cends = "y[0] = a[0] and y[n - 1] = a[n - 1]", "y[0] = a[0];\n  y[n - 1] = a[n - 1];"
    else
      local v = boundary == "zero" and 0 or signed_coefficient(rng)
      ends, cends = string.format("y[0] = y[n - 1] = %s", num(v)), string.format("y[0] = %s;\n  y[n - 1] = %s;", num(v), num(v))
    end
    proto = "void NAME(int n, const double *a, double *y)"
    args = {n = {value = "n"}, a = {count = "n"}, y = {count = "n"}}
    statement = string.format("Compute y[i] = %s for 1 <= i <= n - 2, and at the ends %s (n >= 3).", text, ends)
    reference = string.format("%s {\n  for (int i = 1; i < n - 1; ++i) y[i] = %s;\n  %s\n}\n", proto, text, cends)
    optimised = string.format("%s {\n  %s\n#pragma omp parallel for simd schedule(static)\n"
                              .. "  for (long i = 1; i < n - 1; ++i) y[i] = %s;\n}\n", proto, cends, text)
    local n = rng:pick(ONE_D)
    sizes = {train = {n = n}, heldout = {n = n + 13}, test = {n = 203}}
    flops, bytes = ops .. "*n", "16*n"
    bound = {factor = 2 * (ops + 2) * q, scale = "output", why = string.format("each inner y[i] takes %d roundings: "
             .. "in any order, with or without FMA, it errs by at most %d u times its terms' magnitudes' sum, at most "
             .. "%s; the ends are exact. %s", ops, ops + 2, num(K), spread_why(K, q, string.format("every third inner "
             .. "output reads inputs of its own, so at n >= 203 all of the 67 fall below %s/%d with probability under "
             .. "0.6^67: %d u of the output's largest entry bounds the error, the reference's as large again. Single "
             .. "precision errs by 2^-24 relative.", num(K), q, (ops + 2) * q)))}
  end
  return {
    statement = statement, prototype = proto, args = args, sizes = sizes, flops = flops, bytes = bytes,
    roofline = "memory", bound = bound, techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

return family
