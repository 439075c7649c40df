-- What the universe's families share (universe/families.lua and the modules it gathers):
-- exact coefficients and the expressions built from them, parameter lists, and the drawn
-- sizes. What these draw, and in what order, is part of the universe's version.

---------------------------------------------------------------------------------------
-- Numbers and expressions
---------------------------------------------------------------------------------------

-- A positive dyadic coefficient (k / 16, below 4): exact in binary, so the statement and the
-- C agree to the bit, and positive, so the reference on the inputs' magnitudes bounds every
-- term.
local function coefficient(rng)
  return rng:int(1, 63) / 16
end

-- A coefficient or, now and then, none.
local function maybe(rng)
  return rng:chance(0.75) and coefficient(rng) or nil
end

local function num(c)
  local s = string.format("%.17g", c)
  return s:find("[%.e]") and s or s .. ".0"
end

-- A sum of products of the inputs at index `ix`: {terms = {{coef =, factors = {names}}},
-- constant =}. Every input appears at least once.
local function polynomial(rng, inputs)
  local terms = {}
  for _, name in ipairs(inputs) do
    local factors = {name}
    if rng:chance(0.4) then factors[2] = rng:pick(inputs) end
    terms[#terms + 1] = {coef = rng:chance(0.15) and 1 or coefficient(rng), factors = factors}
  end
  if rng:chance(0.3) then
    terms[#terms + 1] = {coef = coefficient(rng), factors = {rng:pick(inputs), rng:pick(inputs)}}
  end
  return {terms = terms, constant = rng:chance(0.3) and coefficient(rng) or nil}
end

-- The polynomial as C (and as the statement's words): each factor `name[ix]`.
local function render(poly, ix)
  local parts = {}
  for _, t in ipairs(poly.terms) do
    local f = {}
    if t.coef ~= 1 then f[1] = num(t.coef) end
    for _, name in ipairs(t.factors) do f[#f + 1] = name .. "[" .. ix .. "]" end
    parts[#parts + 1] = table.concat(f, " * ")
  end
  if poly.constant then parts[#parts + 1] = num(poly.constant) end
  return table.concat(parts, " + ")
end

-- Floating-point operations of one evaluation.
local function operations(poly)
  local n = 0
  for _, t in ipairs(poly.terms) do n = n + #t.factors - 1 + (t.coef ~= 1 and 1 or 0) end
  return n + #poly.terms - 1 + (poly.constant and 1 or 0)
end

local function const_params(inputs)
  local out = {}
  for _, name in ipairs(inputs) do out[#out + 1] = "const double *" .. name end
  return table.concat(out, ", ")
end

local function input_args(inputs, count, draw)
  local args = {}
  for _, name in ipairs(inputs) do args[name] = {count = count, draw = draw} end
  return args
end

local function join(list, sep) return table.concat(list, sep or ", ") end

---------------------------------------------------------------------------------------
-- Sizes
---------------------------------------------------------------------------------------

local ONE_D = {1 << 19, 3 << 18, 1 << 20, 3 << 19, 1 << 21}
local TWO_D = {{768, 1024}, {1024, 1024}, {1024, 1536}, {1536, 1024}, {2048, 1024}}
local SQUARE = {1024, 1536, 2048, 3072}

local function one_d(rng) local n = rng:pick(ONE_D); return {n = n}, {n = n + 13}, {n = 37} end
local function two_d(rng)
  local mn = rng:pick(TWO_D)
  return {m = mn[1], n = mn[2]}, {m = mn[1] + 7, n = mn[2] + 9}, {m = 13, n = 17}
end
local function square(rng) local n = rng:pick(SQUARE); return {n = n}, {n = n + 11}, {n = 29} end

return {coefficient = coefficient, maybe = maybe, num = num, polynomial = polynomial, render = render,
        operations = operations, const_params = const_params, input_args = input_args, join = join,
        ONE_D = ONE_D, TWO_D = TWO_D, SQUARE = SQUARE, one_d = one_d, two_d = two_d, square = square}
