-- The families of the generated universe (universe.lua): each draws, from a random
-- generator, one task's spec fields (without its name) and its two kernels, a
-- straightforward one and an optimised one, written for the entry `NAME`. What a family
-- draws, and in what order, is part of the universe's version (universe.version).

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

---------------------------------------------------------------------------------------
-- Families: each returns the spec's fields (without name) and its two kernels' bodies,
-- written for the entry `NAME` (replaced by the function's drawn name).
---------------------------------------------------------------------------------------

local INPUTS = {"a", "b", "c"}

local function pick_inputs(rng, most)
  local k = rng:int(1, most)
  return table.move(INPUTS, 1, k, 1, {})
end

-- The two kernels of y[i] = expr over 0 <= i < n: the loop, and the loop over threads and
-- vector lanes.
local function elementwise_kernels(proto, expr)
  return string.format("%s {\n  for (int i = 0; i < n; ++i) y[i] = %s;\n}\n", proto, expr),
         string.format("%s {\n#pragma omp parallel for simd schedule(static)\n"
                       .. "  for (long i = 0; i < n; ++i) y[i] = %s;\n}\n", proto, expr)
end

local family = {}

function family.elementwise(rng)
  local inputs = pick_inputs(rng, 3)
  local poly = polynomial(rng, inputs)
  local inout = rng:chance(0.3)
  local expr = render(poly, "i")
  local ops = operations(poly) + (inout and 2 or 0)
  local rhs = inout and (num(coefficient(rng)) .. " * y[i] + " .. expr) or expr
  local proto = string.format("void NAME(int n, %s, double *y)", const_params(inputs))
  local args = input_args(inputs, "n")
  args.n, args.y = {value = "n"}, {count = "n", role = inout and "inout" or nil}
  local train, heldout, test = one_d(rng)
  local reference, optimised = elementwise_kernels(proto, rhs)
  return {
    statement = string.format("Compute y[i] = %s for 0 <= i < n%s.", rhs,
                              inout and " (y holds its old values on entry)" or ""),
    prototype = proto, args = args, sizes = {train = train, heldout = heldout, test = test},
    flops = ops .. "*n", bytes = string.format("8*%d*n", #inputs + (inout and 2 or 1)), roofline = "memory",
    bound = {factor = 2 * (ops + 1), why = "each y[i] is a short sum of products with positive "
             .. "coefficients: its error is at most (terms + 1) u times the sum of their magnitudes, "
             .. "the reference's as large again; single precision errs by 2^-24."},
    techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

-- The terms of a sum or a scan: a polynomial of up to three inputs without a constant, as
-- C at index i, and its operations.
local function summed_terms(rng)
  local inputs = pick_inputs(rng, 3)
  local poly = polynomial(rng, inputs)
  poly.constant = nil
  return inputs, poly, render(poly, "i"), operations(poly)
end

function family.reduction(rng)
  local inputs, poly, expr, ops = summed_terms(rng)
  local proto = string.format("double NAME(int n, %s)", const_params(inputs))
  local args = input_args(inputs, "n")
  args.n = {value = "n"}
  local train, heldout, test = one_d(rng)
  local body_term = expr
  local unrolled = {}
  for u = 0, 3 do unrolled[#unrolled + 1] = string.format("      s%d += %s;", u, render(poly, "i + " .. u)) end
  return {
    statement = string.format("Return the sum over 0 <= i < n of %s.", expr),
    prototype = proto, args = args, sizes = {train = train, heldout = heldout, test = test},
    flops = (ops + 1) .. "*n", bytes = string.format("8*%d*n", #inputs), roofline = "memory",
    bound = {factor = string.format("2*n + %d", 2 * ops + 2), why = "a sum of n terms in any order "
             .. "(blocked, vector lanes, threads) errs by at most (n + terms) u times the sum of the "
             .. "terms' magnitudes, the reference's as large again; single precision errs by 2^-24."},
    techniques = {"register_blocking", "omp"},
    reference = string.format("%s {\n  double s = 0;\n  for (int i = 0; i < n; ++i) s += %s;\n  return s;\n}\n",
                              proto, body_term),
    optimised = string.format([[%s {
  double s = 0;
#pragma omp parallel reduction(+:s)
  {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp for schedule(static)
    for (long i = 0; i < (n & ~3L); i += 4) {
%s
    }
    s += (s0 + s1) + (s2 + s3);
  }
  for (long i = n & ~3L; i < n; ++i) s += %s;
  return s;
}
]], proto, join(unrolled, "\n"), body_term),
  }
end

function family.scan(rng)
  local inputs, _, expr, ops = summed_terms(rng)
  local proto = string.format("void NAME(int n, %s, double *y)", const_params(inputs))
  local args = input_args(inputs, "n")
  args.n, args.y = {value = "n"}, {count = "n"}
  local train, heldout, test = one_d(rng)
  return {
    statement = string.format("Compute the inclusive prefix sums y[i] = t[0] + t[1] + ... + t[i] for "
                              .. "0 <= i < n, where t[i] = %s.", expr),
    prototype = proto, args = args, sizes = {train = train, heldout = heldout, test = test},
    flops = (ops + 1) .. "*n", bytes = string.format("8*%d*n", #inputs + 1), roofline = "memory",
    bound = {factor = string.format("2*n + %d", 2 * ops + 2), why = "y[i] is a sum of i + 1 terms: in "
             .. "any order (a blocked parallel scan adds block totals) it errs by at most (n + terms) u "
             .. "times the sum of their magnitudes, the reference's as large again."},
    techniques = {"omp"},
    reference = string.format("%s {\n  double s = 0;\n  for (int i = 0; i < n; ++i) {\n    s += %s;\n"
                              .. "    y[i] = s;\n  }\n}\n", proto, expr),
    -- each thread scans its block, then adds the totals of the blocks before it
    optimised = string.format([[#include <omp.h>
%s {
  double totals[1024];
  int parts = 1;
#pragma omp parallel
  {
    int t = omp_get_thread_num(), p = omp_get_num_threads();
    if (p > 1024) p = 1024;
#pragma omp single
    parts = p;
    long lo = (long)n * t / p, hi = (long)n * (t + 1) / p;
    double s = 0;
    if (t < p) {
      for (long i = lo; i < hi; ++i) {
        s += %s;
        y[i] = s;
      }
      totals[t] = s;
    }
#pragma omp barrier
    double before = 0;
    for (int u = 0; u < t && u < parts; ++u) before += totals[u];
    if (t < p && before != 0)
      for (long i = lo; i < hi; ++i) y[i] += before;
  }
}
]], proto, expr),
  }
end

-- Offsets of a stencil's taps, always with the centre; weights positive dyadic.
local function taps_1d(rng, r)
  local taps = {}
  for d = -r, r do
    if d == 0 or rng:chance(0.7) then taps[#taps + 1] = {d = d, w = coefficient(rng)} end
  end
  return taps
end

function family.stencil1d(rng)
  local r = rng:int(1, 3)
  local taps = taps_1d(rng, r)
  local terms = {}
  for _, t in ipairs(taps) do terms[#terms + 1] = string.format("%s * x[i + %d]", num(t.w), t.d + r) end
  local expr = join(terms, " + ")
  local proto = "void NAME(int n, const double *x, double *y)"
  local train, heldout, test = one_d(rng)
  local reference, optimised = elementwise_kernels(proto, expr)
  return {
    statement = string.format("Compute y[i] = %s for 0 <= i < n; x holds n + %d elements.", expr, 2 * r),
    prototype = proto,
    args = {n = {value = "n"}, x = {count = "n + " .. 2 * r}, y = {count = "n"}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = (2 * #taps - 1) .. "*n", bytes = "16*n", roofline = "memory",
    bound = {factor = 2 * #taps + 2, why = "each y[i] is a sum of " .. #taps .. " products with positive "
             .. "weights: its error is at most that many u times their magnitudes' sum, the reference's "
             .. "as large again; single precision errs by 2^-24."},
    techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

function family.stencil2d(rng)
  local r = rng:int(1, 2)
  local taps = {}
  for di = -r, r do
    for dj = -r, r do
      if (di == 0 and dj == 0) or rng:chance(0.45) then
        taps[#taps + 1] = {di = di, dj = dj, w = coefficient(rng)}
      end
    end
  end
  local w = "(n + " .. 2 * r .. ")"
  local terms = {}
  for _, t in ipairs(taps) do
    terms[#terms + 1] = string.format("%s * x[(i + %d) * %s + j + %d]", num(t.w), t.di + r, w, t.dj + r)
  end
  local expr = join(terms, " + ")
  local proto = "void NAME(int m, int n, const double *x, double *y)"
  local train, heldout, test = two_d(rng)
  local words = {}
  for _, t in ipairs(taps) do words[#words + 1] = string.format("%s * X[i + %d][j + %d]", num(t.w), t.di + r, t.dj + r) end
  return {
    statement = string.format("X is an (m + %d) x (n + %d) row-major matrix in x, Y an m x n one in y. "
                              .. "Compute Y[i][j] = %s for 0 <= i < m, 0 <= j < n.", 2 * r, 2 * r, join(words, " + ")),
    prototype = proto,
    args = {m = {value = "m"}, n = {value = "n"}, x = {count = string.format("(m + %d) * (n + %d)", 2 * r, 2 * r)},
            y = {count = "m * n"}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = (2 * #taps - 1) .. "*m*n", bytes = "16*m*n", roofline = "memory",
    bound = {factor = 2 * #taps + 2, why = "each Y[i][j] is a sum of " .. #taps .. " products with positive "
             .. "weights: its error is at most that many u times their magnitudes' sum, the reference's "
             .. "as large again; single precision errs by 2^-24."},
    techniques = {"cache_blocking", "simd", "omp"},
    reference = string.format("%s {\n  for (int i = 0; i < m; ++i)\n    for (int j = 0; j < n; ++j)\n"
                              .. "      y[(long)i * n + j] = %s;\n}\n", proto, expr:gsub("%(i %+", "((long)i +")),
    optimised = string.format([[%s {
  const int JB = 512;
#pragma omp parallel for collapse(2) schedule(static)
  for (int i = 0; i < m; ++i)
    for (int jj = 0; jj < n; jj += JB) {
      int je = jj + JB < n ? jj + JB : n;
#pragma omp simd
      for (int j = jj; j < je; ++j)
        y[(long)i * n + j] = %s;
    }
}
]], proto, (expr:gsub("%(i %+", "((long)i +"))),
  }
end

function family.triangular(rng)
  local lower = rng:chance(0.5)
  local strict = rng:chance(0.5)
  local transposed = rng:chance(0.5)  -- A[j][i]: a column of the triangle
  local proto = "void NAME(int n, const double *A, const double *x, double *y)"
  local train, heldout, test = square(rng)
  -- the j a row (or a column) of the lower (upper) triangle holds for i
  local below = lower ~= transposed
  local range = below and (strict and "0 <= j < i" or "0 <= j <= i") or (strict and "i < j < n" or "i <= j < n")
  local lo = below and "0" or (strict and "i + 1" or "i")
  local hi = below and (strict and "i" or "i + 1") or "n"
  local alpha = maybe(rng)
  local scaled = maybe(rng)
  local lhs = scaled and (num(scaled) .. " * x[i] + ") or ""
  local times = alpha and (num(alpha) .. " * ") or ""
  local entry = transposed and "A[j][i]" or "A[i][j]"
  local centry = transposed and "A[(long)j * n + i]" or "A[(long)i * n + j]"
  -- the entry at column (row) index expression ix, through the row pointer where it can
  local function at(ix)
    return transposed and ("A[(long)(" .. ix .. ") * n + i]") or ("row[" .. ix .. "]")
  end
  return {
    statement = string.format("A is an n x n row-major %s triangular matrix (the other triangle is not "
                              .. "to be read). Compute y[i] = %s%ssum over %s of %s * x[j] for 0 <= i < n.",
                              lower and "lower" or "upper", lhs, times, range, entry),
    prototype = proto,
    args = {n = {value = "n"}, A = {count = "n * n", draw = {lower and "lower" or "upper", n = "n"}},
            x = {count = "n"}, y = {count = "n"}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = "n*(n + 1)" .. (scaled and " + 2*n" or "") .. (alpha and " + n" or ""),
    bytes = "4*n*(n + 1) + 16*n", roofline = "memory",
    bound = {factor = "2*n + 8", why = "y[i] is a sum of at most n + 1 products: in any order its error is "
             .. "at most (n + 3) u times the sum of their magnitudes, the reference's as large again."},
    techniques = {"register_blocking", "simd", "omp"},
    reference = string.format([[%s {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = %s; j < %s; ++j) s += %s * x[j];
    y[i] = %s%ss;
  }
}
]], proto, lo, hi, centry, lhs, times),
    optimised = string.format([[%s {
#pragma omp parallel for schedule(dynamic, 16)
  for (int i = 0; i < n; ++i) {
    const double *row = A + (long)i * n;
    int lo = %s, hi = %s, even = lo + ((hi - lo) & ~1);
    double s0 = 0, s1 = 0;
#pragma omp simd reduction(+:s0, s1)
    for (int j = lo; j < even; j += 2) {
      s0 += %s * x[j];
      s1 += %s * x[j + 1];
    }
    if (even < hi) s0 += %s * x[even];
    (void)row;
    y[i] = %s%s(s0 + s1);
  }
}
]], proto, lo, hi, at("j"), at("j + 1"), at("even"), lhs, times),
  }
end

function family.banded(rng)
  local bl, bu = rng:int(0, 4), rng:int(0, 4)
  if bl + bu == 0 then bu = 1 end
  local width = bl + bu + 1
  local alpha = maybe(rng)
  local times = alpha and (num(alpha) .. " * ") or ""
  local proto = "void NAME(int n, const double *B, const double *x, double *y)"
  local train, heldout, test = one_d(rng)
  return {
    statement = string.format("B holds a band matrix with %d diagonals, row by row: B[i*%d + d + %d] is "
                              .. "the entry (i, i + d) for -%d <= d <= %d (entries with i + d outside [0, n) "
                              .. "are not to be read). Compute y[i] = %ssum over d of B[i*%d + d + %d] * x[i + d], "
                              .. "for 0 <= i < n, over the d with 0 <= i + d < n.",
                              width, width, bl, bl, bu, times, width, bl),
    prototype = proto,
    args = {n = {value = "n"}, B = {count = width .. " * n"}, x = {count = "n"}, y = {count = "n"}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = string.format("%d*n", 2 * width + (alpha and 1 or 0)), bytes = string.format("8*%d*n", width + 2),
    roofline = "memory",
    bound = {factor = 2 * width + 4, why = "each y[i] is a sum of at most " .. width .. " products: its error is "
             .. "at most that many u (and one more for the scale) times their magnitudes' sum, the "
             .. "reference's as large again."},
    techniques = {"simd", "omp"},
    reference = string.format([[%s {
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int d = -%d; d <= %d; ++d)
      if (i + d >= 0 && i + d < n) s += B[(long)i * %d + d + %d] * x[i + d];
    y[i] = %ss;
  }
}
]], proto, bl, bu, width, bl, times),
    -- the rows whose band lies inside the vector need no test
    optimised = string.format([[%s {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    double s = 0;
    if (i >= %d && i + %d < n) {
#pragma omp simd reduction(+:s)
      for (int d = -%d; d <= %d; ++d) s += B[i * %d + d + %d] * x[i + d];
    } else {
      for (int d = -%d; d <= %d; ++d)
        if (i + d >= 0 && i + d < n) s += B[i * %d + d + %d] * x[i + d];
    }
    y[i] = %ss;
  }
}
]], proto, bl, bu, bl, bu, width, bl, bl, bu, width, bl, times),
  }
end

function family.recurrence(rng)
  local c = rng:int(1, 15) / 16
  local w = maybe(rng)
  local with_z = rng:chance(0.5)
  local wz = with_z and maybe(rng)
  local wx = (w and (num(w) .. " * ") or "") .. "x[i]"
  local term = wx .. (with_z and (" + " .. (wz and (num(wz) .. " * ") or "") .. "z[i]") or "")
  local proto = with_z and "void NAME(int n, const double *x, const double *z, double *y)"
    or "void NAME(int n, const double *x, double *y)"
  local train, heldout, test = one_d(rng)
  local args = {n = {value = "n"}, x = {count = "n"}, y = {count = "n"}}
  if with_z then args.z = {count = "n"} end
  local t4 = {}
  for u = 0, 3 do t4[u + 1] = (term:gsub("%[i%]", u == 0 and "[i]" or "[i + " .. u .. "]")) end
  return {
    statement = string.format("Compute y[0] = %s and y[i] = %s * y[i-1] + %s for 1 <= i < n.",
                              (term:gsub("%[i%]", "[0]")), num(c), term),
    prototype = proto, args = args,
    sizes = {train = train, heldout = heldout, test = test},
    flops = string.format("%d*n", 2 + (w and 1 or 0) + (with_z and 1 or 0) + (wz and 1 or 0)),
    bytes = string.format("%d*n", with_z and 24 or 16), roofline = "memory",
    bound = {factor = math.ceil(12 / (1 - c)) + 8, why = "each step rounds a few products and sums (at most "
             .. "4 u of the step's magnitude) and later steps shrink that error by the factor, below 1: "
             .. "y[i] errs by at most 4 u sum over m of (m + 1) factor^m |t[i-m]| for the step terms t, "
             .. "about 4 u / (1 - factor) times the magnitudes' sum for inputs of one size; the "
             .. "reference's as large again, with room for FMA contractions. Single precision errs by 2^-24."},
    -- serial by nature: the unrolled steps are not register blocking (no independent
    -- accumulators), so prefetch is the only technique it claims
    techniques = {"prefetch"},
    reference = string.format("%s {\n  double s = 0;\n  for (int i = 0; i < n; ++i) {\n"
                              .. "    s = %s * s + %s;\n    y[i] = s;\n  }\n}\n", proto, num(c), term),
    optimised = string.format([[%s {
  const double c = %s;
  double s = 0;
  long i = 0;
  for (; i + 4 <= n; i += 4) {
    __builtin_prefetch(x + i + 64);
    double s0 = c * s + %s;
    double s1 = c * s0 + %s;
    double s2 = c * s1 + %s;
    s = c * s2 + %s;
    y[i] = s0; y[i + 1] = s1; y[i + 2] = s2; y[i + 3] = s;
  }
  for (; i < n; ++i) {
    s = c * s + %s;
    y[i] = s;
  }
}
]], proto, num(c), t4[1], t4[2], t4[3], t4[4], term),
  }
end

function family.gather(rng)
  local stride = rng:pick({3, 5, 7, 11, 13, 17, 31, 97, 1021})
  local shift = rng:int(0, 999)
  local w = coefficient(rng)
  local proto = "void NAME(int n, const double *x, const double *z, double *y)"
  local train, heldout, test = one_d(rng)
  local index = string.format("((long)i * %d + %d) %% n", stride, shift)
  return {
    statement = string.format("Compute y[i] = %s * x[(%d*i + %d) mod n] + z[i] for 0 <= i < n "
                              .. "(the index computed without overflow).", num(w), stride, shift),
    prototype = proto,
    args = {n = {value = "n"}, x = {count = "n"}, z = {count = "n"}, y = {count = "n"}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = "2*n", bytes = "24*n", roofline = "memory",
    bound = {factor = 4, why = "one product and one sum: at most 2 u times the magnitudes, the "
             .. "reference's as large again; single precision errs by 2^-24."},
    techniques = {"omp", "prefetch"},
    reference = string.format("%s {\n  for (int i = 0; i < n; ++i) y[i] = %s * x[%s] + z[i];\n}\n",
                              proto, num(w), index),
    optimised = string.format([[%s {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    long k = (i * %d + %d) %% n;
    __builtin_prefetch(x + (k + 16L * %d) %% n);
    y[i] = %s * x[k] + z[i];
  }
}
]], proto, stride, shift, stride, num(w)),
  }
end

function family.transpose(rng)
  local alpha = coefficient(rng)
  local beta = maybe(rng)
  local proto = "void NAME(int m, int n, const double *A, double *B)"
  local train, heldout, test = two_d(rng)
  local rhs = num(alpha) .. " * A[i][j]" .. (beta and (" + " .. num(beta) .. " * B[j][i]") or "")
  local crhs = num(alpha) .. " * A[(long)i * n + j]" .. (beta and (" + " .. num(beta) .. " * B[(long)j * m + i]") or "")
  return {
    statement = string.format("A is an m x n row-major matrix, B an n x m one%s. Compute B[j][i] = %s "
                              .. "for 0 <= i < m, 0 <= j < n.", beta and " holding its old values on entry" or "",
                              rhs),
    prototype = proto,
    args = {m = {value = "m"}, n = {value = "n"}, A = {count = "m * n"},
            B = {count = "m * n", role = beta and "inout" or nil}},
    sizes = {train = train, heldout = heldout, test = test},
    flops = (beta and 3 or 1) .. "*m*n", bytes = (beta and 24 or 16) .. "*m*n", roofline = "memory",
    bound = {factor = 6, why = "at most two products and a sum: 3 u times the magnitudes, the "
             .. "reference's as large again."},
    techniques = {"cache_blocking", "omp"},
    reference = string.format("%s {\n  for (int i = 0; i < m; ++i)\n    for (int j = 0; j < n; ++j)\n"
                              .. "      B[(long)j * m + i] = %s;\n}\n", proto, crhs),
    optimised = string.format([[%s {
  const int T = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int ii = 0; ii < m; ii += T)
    for (int jj = 0; jj < n; jj += T) {
      int ie = ii + T < m ? ii + T : m, je = jj + T < n ? jj + T : n;
      for (int j = jj; j < je; ++j)
        for (int i = ii; i < ie; ++i)
          B[(long)j * m + i] = %s;
    }
}
]], proto, crhs),
  }
end

-- Names a family's statement and prototype use, drawn so that a model learns to read them
-- from the statement rather than to expect one spelling.
local WINDOW_NAMES = {{n = "n", k = "k", x = "x", w = "w", y = "y"}, {n = "n", k = "m", x = "in", w = "h", y = "out"},
                      {n = "len", k = "k", x = "sig", w = "coef", y = "res"}, {n = "n", k = "taps", x = "u", w = "c", y = "v"}}
local FILTER_NAMES = {{h = "h", w = "w", img = "img", f = "f", out = "out"}, {h = "m", w = "n", img = "x", f = "k", out = "y"},
                      {h = "rows", w = "cols", img = "a", f = "c", out = "b"}, {h = "h", w = "w", img = "src", f = "g", out = "dst"}}

-- A weighted window whose weights are an input array of a length given at run time:
-- y[i] = alpha * (sum over j < k of w[j] * x[s*i + d*j]) (+ z[i]), dilation d, stride s.
function family.window(rng)
  local v = rng:pick(WINDOW_NAMES)
  local d, s = rng:pick({1, 1, 2, 3}), rng:pick({1, 1, 2})
  local alpha, plus = maybe(rng), rng:chance(0.3)
  local left = s == 1 and "i" or (s .. "*i")
  local function at(j)  -- x's index for output i and tap j, as words
    if j == "0" then return left end
    return left .. " + " .. (d == 1 and j or (j == "1" and tostring(d) or (d .. "*" .. j)))
  end
  local length = s == 1 and string.format("%s + %s(%s - 1)", v.n, d == 1 and "" or d .. "*", v.k)
                 or string.format("%d*(%s - 1) + %s(%s - 1) + 1", s, v.n, d == 1 and "" or d .. "*", v.k)
  if s == 1 and d == 1 then length = v.n .. " + " .. v.k .. " - 1" end
  local sum
  if rng:chance(0.5) then
    sum = string.format("%s[0]*%s[%s] + %s[1]*%s[%s] + ... + %s[%s-1]*%s[%s]", v.w, v.x, at("0"), v.w, v.x,
                        at("1"), v.w, v.k, v.x, at("(" .. v.k .. "-1)"))
  else
    sum = string.format("sum over j = 0..%s-1 of %s[j] * %s[%s]", v.k, v.w, v.x, at("j"))
  end
  local rhs = (alpha and (num(alpha) .. " * (" .. sum .. ")") or sum) .. (plus and " + z[i]" or "")
  local params = string.format("int %s, int %s, const double *%s, const double *%s%s, double *%s", v.n, v.k,
                               v.x, v.w, plus and ", const double *z" or "", v.y)
  local proto = "void NAME(" .. params .. ")"
  local n = rng:pick(ONE_D)
  local k = rng:pick({3, 4, 5, 7, 8, 9, 11, 13, 16})
  local args = {[v.n] = {value = v.n}, [v.k] = {value = v.k}, [v.x] = {count = length},
                [v.w] = {count = v.k}, [v.y] = {count = v.n}}
  if plus then args.z = {count = v.n} end
  local cindex = string.format("(long)%s%s + %sj", s == 1 and "" or s .. " * ", "i", d == 1 and "" or d .. " * ")
  local finish = (alpha and (num(alpha) .. " * ") or "") .. "%s" .. (plus and " + z[i]" or "")
  local ik = d == 1 and "j" or (d .. " * j")
  return {
    statement = string.format("Compute %s[i] = %s for 0 <= i < %s; %s holds %s elements and %s holds %s.",
                              v.y, rhs, v.n, v.x, length, v.w, v.k),
    prototype = proto, args = args,
    sizes = {train = {[v.n] = n, [v.k] = k}, heldout = {[v.n] = n + 13, [v.k] = k + 2}, test = {[v.n] = 37, [v.k] = 3}},
    flops = string.format("%d*%s*%s", 2, v.n, v.k), bytes = string.format("8*(%s + %s + %d*%s)", length, v.k,
                                                                         plus and 2 or 1, v.n),
    roofline = "memory",
    bound = {factor = "2*" .. v.k .. " + 4", why = "each output is a sum of " .. v.k .. " products: in any order "
             .. "its error is at most that many u times the sum of their magnitudes, the reference's as large "
             .. "again; single precision errs by 2^-24."},
    techniques = {"simd", "omp"},
    reference = string.format([[%s {
  for (int i = 0; i < %s; ++i) {
    double s = 0;
    for (int j = 0; j < %s; ++j) s += %s[j] * %s[%s];
    %s[i] = %s;
  }
}
]], proto, v.n, v.k, v.w, v.x, cindex, v.y, string.format(finish, "s")),
    -- a block of outputs accumulates tap by tap (each output's sum in the same order),
    -- vectorised over the outputs
    optimised = string.format([[%s {
#pragma omp parallel for schedule(static)
  for (int i0 = 0; i0 < %s; i0 += 256) {
    int i1 = i0 + 256 < %s ? i0 + 256 : %s;
    double acc[256];
    for (int i = i0; i < i1; ++i) acc[i - i0] = 0;
    for (int j = 0; j < %s; ++j) {
      const double t = %s[j];
      const double *p = %s + %s;
#pragma omp simd
      for (int i = i0; i < i1; ++i) acc[i - i0] += t * p[%s];
    }
    for (int i = i0; i < i1; ++i) %s[i] = %s;
  }
}
]], proto, v.n, v.n, v.n, v.k, v.w, v.x, ik, s == 1 and "i" or "(long)" .. s .. " * i", v.y,
    string.format(finish, "acc[i - i0]")),
  }
end

-- A 2-D correlation with a p x q filter given as an input array over an image with its halo.
function family.filter2d(rng)
  local v = rng:pick(FILTER_NAMES)
  local p, q = rng:pick({2, 3, 3, 4, 5}), rng:pick({2, 3, 3, 4, 5})
  local alpha = maybe(rng)
  local stride = string.format("(%s+%d)", v.w, q - 1)
  local img_count = string.format("(%s+%d)*(%s+%d)", v.h, p - 1, v.w, q - 1)
  local words
  local term = string.format("%s[a*%d + b] * %s[(i+a)*%s + (j+b)]", v.f, q, v.img, stride)
  if rng:chance(0.5) then
    words = string.format("%s is an (%s+%d)-by-(%s+%d) image stored row-major (%s[r*%s + c]) including its halo, "
                          .. "%s a %dx%d filter stored row-major (%s[a*%d + b]); compute the %s-by-%s output "
                          .. "(%s[i*%s + j], 0 <= i < %s, 0 <= j < %s): %s[i*%s + j] = %ssum over a in {0..%d}, "
                          .. "b in {0..%d} of %s%s.",
                          v.img, v.h, p - 1, v.w, q - 1, v.img, stride, v.f, p, q, v.f, q, v.h, v.w, v.out,
                          v.w, v.h, v.w, v.out, v.w, alpha and (num(alpha) .. " * ") or "", p - 1, q - 1, term,
                          alpha and "" or "")
  else
    words = string.format("X is the (%s+%d) x (%s+%d) row-major matrix in %s, F the %d x %d one in %s and Y the "
                          .. "%s x %s one in %s. Compute Y[i][j] = %ssum over 0 <= a < %d, 0 <= b < %d of "
                          .. "F[a][b] * X[i+a][j+b] for 0 <= i < %s, 0 <= j < %s.",
                          v.h, p - 1, v.w, q - 1, v.img, p, q, v.f, v.h, v.w, v.out,
                          alpha and (num(alpha) .. " * ") or "", p, q, v.h, v.w)
  end
  local proto = string.format("void NAME(int %s, int %s, const double *%s, const double *%s, double *%s)",
                              v.h, v.w, v.img, v.f, v.out)
  local train, heldout, test = two_d(rng)
  local function sized(t) return {[v.h] = t.m, [v.w] = t.n} end
  local scale = alpha and (num(alpha) .. " * ") or ""
  return {
    statement = words, prototype = proto,
    args = {[v.h] = {value = v.h}, [v.w] = {value = v.w}, [v.img] = {count = img_count}, [v.f] = {count = p * q},
            [v.out] = {count = v.h .. "*" .. v.w}},
    sizes = {train = sized(train), heldout = sized(heldout), test = sized(test)},
    flops = string.format("%d*%s*%s", 2 * p * q, v.h, v.w),
    bytes = string.format("8*(%s + %d + %s*%s)", img_count, p * q, v.h, v.w), roofline = "memory",
    bound = {factor = 2 * p * q + 4, why = "each output is a sum of " .. p * q .. " products: in any order its "
             .. "error is at most that many u times the sum of their magnitudes, the reference's as large "
             .. "again; single precision errs by 2^-24."},
    techniques = {"simd", "omp"},
    reference = string.format([[%s {
  const long ld = (long)%s + %d;
  for (long i = 0; i < %s; ++i)
    for (long j = 0; j < %s; ++j) {
      double s = 0;
      for (int a = 0; a < %d; ++a)
        for (int b = 0; b < %d; ++b) s += %s[a * %d + b] * %s[(i + a) * ld + j + b];
      %s[i * %s + j] = %ss;
    }
}
]], proto, v.w, q - 1, v.h, v.w, p, q, v.f, q, v.img, v.out, v.w, scale),
    -- a row of outputs accumulates filter tap by tap (each output's sum in the same order)
    optimised = string.format([[%s {
  const long s = (long)%s + %d;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < %s; ++i) {
    double *o = %s + i * %s;
    for (long j = 0; j < %s; ++j) o[j] = 0;
    for (int a = 0; a < %d; ++a)
      for (int b = 0; b < %d; ++b) {
        const double c = %s[a * %d + b];
        const double *row = %s + (i + a) * s + b;
#pragma omp simd
        for (long j = 0; j < %s; ++j) o[j] += c * row[j];
      }
%s  }
}
]], proto, v.w, q - 1, v.h, v.out, v.w, v.w, p, q, v.f, q, v.img, v.w,
    alpha and string.format("#pragma omp simd\n    for (long j = 0; j < %s; ++j) o[j] *= %s;\n", v.w, num(alpha)) or ""),
  }
end

---------------------------------------------------------------------------------------
-- Building blocks of factorisations and transforms (version 6): the loops of a symmetric
-- factorisation and of small Fourier and Hadamard transforms, on shapes and functions no
-- held-out task has (an LDL^T with its own diagonal output, blocks of a few points).
---------------------------------------------------------------------------------------

-- The names of the matrix, the diagonal's buffer and the factor's, for a lower factor (L)
-- or an upper one (U = L^T), drawn each on its own (none a local of the kernels).
local LDLT_NAMES = {A = {"A", "S", "M", "P", "K", "H"}, d = {"d", "dg", "dvec", "dv", "piv", "dd"},
                    lower = {"L", "Lf", "Lo", "F", "Lw", "Lm"}, upper = {"U", "Uf", "Up", "G", "R", "Ur"}}
local LDLT_SIZES = {256, 384, 512, 640}

-- The LDL^T factorisation of a symmetric positive definite matrix: L unit lower triangular
-- and the diagonal d, A = L diag(d) L^T; or its transpose U = L^T, A = U^T diag(d) U. Now
-- and then of A shifted by a multiple of the identity (A + sigma I), so that the statement
-- has to be read.
function family.ldlt(rng)
  local upper = rng:chance(0.5)
  local A, d = rng:pick(LDLT_NAMES.A), rng:pick(LDLT_NAMES.d)
  local F = rng:pick(upper and LDLT_NAMES.upper or LDLT_NAMES.lower)
  local by_rows = rng:chance(0.5)  -- the reference's outer loop: L's rows, or its columns
  local shift = rng:chance(0.5) and coefficient(rng) or nil
  local plus = shift and (" + " .. num(shift)) or ""
  local proto = string.format("void NAME(int n, const double *%s, double *%s, double *%s)", A, F, d)
  -- entry (i, j) of L (i >= j) in the factor's storage, and the matching entry of A: the
  -- upper form reads A's upper triangle, which holds the same values
  local function l(i, j)
    return upper and string.format("%s[(long)%s * n + %s]", F, j, i) or string.format("%s[(long)%s * n + %s]", F, i, j)
  end
  local function a(i, j)
    return upper and string.format("%s[(long)%s * n + %s]", A, j, i) or string.format("%s[(long)%s * n + %s]", A, i, j)
  end
  local layout = string.format("A is the symmetric positive definite n x n matrix in %s, row-major (%s[i*n + j], both "
                               .. "triangles stored); %s is n x n row-major (%s[i][j] = %s[i*n + j]) and %s holds n "
                               .. "values.", A, A, F, F, F, d)
  local statement
  if rng:chance(0.5) then
    -- the matrix factorised: A itself, or B = A + sigma I
    local B = shift and "B" or "A"
    local what = string.format("the symmetric positive definite n x n matrix %sstored row-major in %s (%s[i*n + j], "
                               .. "both triangles stored)%s", shift and "A " or "", A, A,
                               shift and string.format(", shifted: B = A + %s * I", num(shift)) or "")
    statement = upper and string.format("Compute the factorisation %s = %s^T * D * %s of %s: %s unit upper "
                                        .. "triangular, written row-major into %s (%s[i*n + j]; ones on the diagonal, "
                                        .. "zeros in every entry below it, j < i), and D diagonal, its entries written "
                                        .. "into %s (%s[i] = D[i][i], n values).", B, F, F, what, F, F, F, d, d)
      or string.format("Compute the LDL^T factorisation %s = %s * D * %s^T of %s: %s unit lower triangular, "
                       .. "written row-major into %s (%s[i*n + j]; ones on the diagonal, zeros in every entry above "
                       .. "it, j > i), and D diagonal, its entries written into %s (%s[j] = D[j][j], n values).",
                       B, F, F, what, F, F, F, d, d)
  else
    local sigma = shift and (num(shift) .. " * I") or ""
    statement = upper and string.format("%s For i = 0, 1, ..., n-1 in turn: %s[i] = A[i][i]%s - sum over 0 <= k < i of "
                                        .. "%s[k][i]^2 * %s[k], then %s[i][j] = (A[i][j] - sum over 0 <= k < i of "
                                        .. "%s[k][i] * %s[k] * %s[k][j]) / %s[i] for i < j < n; %s[i][i] = 1 and "
                                        .. "%s[i][j] = 0 for j < i (so A%s = %s^T diag(%s) %s).", layout, d, plus, F, d,
                                        F, F, d, F, d, F, F, shift and (" + " .. sigma) or "", F, d, F)
      or string.format("%s For j = 0, 1, ..., n-1 in turn: %s[j] = A[j][j]%s - sum over 0 <= k < j of %s[j][k]^2 * "
                       .. "%s[k], then %s[i][j] = (A[i][j] - sum over 0 <= k < j of %s[i][k] * %s[k] * %s[j][k]) / "
                       .. "%s[j] for j < i < n; %s[j][j] = 1 and %s[i][j] = 0 for j > i (so A%s = %s diag(%s) %s^T).",
                       layout, d, plus, F, d, F, F, d, F, d, F, F, shift and (" + " .. sigma) or "", F, d, F)
  end
  local n = rng:pick(LDLT_SIZES)
  local reference
  if by_rows then
    reference = string.format([[%s {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      double s = %s;
      for (int k = 0; k < j; ++k) s -= %s * %s[k] * %s;
      %s = s / %s[j];
    }
    double s = %s%s;
    for (int k = 0; k < i; ++k) s -= %s * %s * %s[k];
    %s[i] = s;
    %s = 1.0;
    for (int j = i + 1; j < n; ++j) %s = 0.0;
  }
}
]], proto, a("i", "j"), l("i", "k"), d, l("j", "k"), l("i", "j"), d, a("i", "i"), plus, l("i", "k"), l("i", "k"), d, d,
    l("i", "i"), l("i", "j"))
  else
    reference = string.format([[%s {
  for (int j = 0; j < n; ++j) {
    double s = %s%s;
    for (int k = 0; k < j; ++k) s -= %s * %s * %s[k];
    %s[j] = s;
    %s = 1.0;
    for (int i = 0; i < j; ++i) %s = 0.0;
    for (int i = j + 1; i < n; ++i) {
      double t = %s;
      for (int k = 0; k < j; ++k) t -= %s * %s[k] * %s;
      %s = t / %s[j];
    }
  }
}
]], proto, a("j", "j"), plus, l("j", "k"), l("j", "k"), d, d, l("j", "j"), l("i", "j"), a("i", "j"), l("i", "k"), d,
    l("j", "k"), l("i", "j"), d)
  end
  local optimised
  if upper then
    -- row i of U: its column above the diagonal scaled by d once (w), then the row's entries
    -- right of the diagonal as A's row minus a sum of earlier rows, vectorised along the row
    -- and split over threads in chunks
    optimised = string.format([[#include <stdlib.h>
%s {
  double *w = malloc(sizeof(double) * (n > 0 ? n : 1));
  for (int i = 0; i < n; ++i) {
    double s = %s[(long)i * n + i]%s;
    for (int k = 0; k < i; ++k) {
      const double u = %s[(long)k * n + i];
      w[k] = u * %s[k];
      s -= w[k] * u;
    }
    %s[i] = s;
    const double di = s;
#pragma omp parallel for schedule(static)
    for (int j0 = i + 1; j0 < n; j0 += 64) {
      const int j1 = j0 + 64 < n ? j0 + 64 : n;
      double acc[64];
      for (int j = j0; j < j1; ++j) acc[j - j0] = %s[(long)i * n + j];
      for (int k = 0; k < i; ++k) {
        const double t = w[k];
        const double *row = %s + (long)k * n;
#pragma omp simd
        for (int j = j0; j < j1; ++j) acc[j - j0] -= t * row[j];
      }
      for (int j = j0; j < j1; ++j) %s[(long)i * n + j] = acc[j - j0] / di;
    }
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < i; ++j) %s[i * n + j] = 0.0;
    %s[i * n + i] = 1.0;
  }
  free(w);
}
]], proto, A, plus, F, d, d, A, F, F, F, F)
  else
    -- column j of L: row j scaled by d once (w), then every row below as a dot product of
    -- its leading part with w (contiguous in row-major storage), rows split over threads
    optimised = string.format([[#include <stdlib.h>
%s {
  double *w = malloc(sizeof(double) * (n > 0 ? n : 1));
#pragma omp parallel
  for (int j = 0; j < n; ++j) {
#pragma omp single
    {
      const double *lj = %s + (long)j * n;
      double s = %s[(long)j * n + j]%s;
      for (int k = 0; k < j; ++k) {
        w[k] = lj[k] * %s[k];
        s -= w[k] * lj[k];
      }
      %s[j] = s;
    }
#pragma omp for schedule(static)
    for (int i = j + 1; i < n; ++i) {
      const double *li = %s + (long)i * n;
      double t = 0;
#pragma omp simd reduction(+:t)
      for (int k = 0; k < j; ++k) t += li[k] * w[k];
      %s[(long)i * n + j] = (%s[(long)i * n + j] - t) / %s[j];
    }
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    %s[i * n + i] = 1.0;
    for (long j = i + 1; j < n; ++j) %s[i * n + j] = 0.0;
  }
  free(w);
}
]], proto, F, A, plus, d, d, F, F, A, d, F, F)
  end
  return {
    statement = statement, prototype = proto,
    args = {n = {value = "n"}, [A] = {count = "n * n", draw = {"spd", n = "n"}}, [F] = {count = "n * n"},
            [d] = {count = "n"}},
    sizes = {train = {n = n}, heldout = {n = n + 11}, test = {n = 29}},
    flops = "n*n*n/3", bytes = "16*n*n + 8*n", roofline = "compute",
    bound = {factor = "8*n", scale = "output", why = "each output is checked against its buffer's largest entry: "
             .. "1 for the factor (its unit diagonal) and at least A[0][0] >= 2n for the diagonal. The draw's "
             .. "off-diagonal entries lie in [-1, 1) and its diagonal in [2n, 2n+1): each D entry is A's diagonal "
             .. "entry less a sum of squares below 2, in [2n-2, 2n+1], and the factor's entries off the diagonal "
             .. "are below "
             .. "1/(n-1) (a shift of the diagonal, below 4, changes these by less than 2/n). A D entry is A's "
             .. "diagonal entry minus at most n-1 terms summing below 2, so the partial sums stay in [2n-2, 2n+5] "
             .. "and its roundings err by at most (n + 3) u max|D|; an off-diagonal "
             .. "entry's numerator subtracts terms whose magnitudes sum below 2 (Cauchy-Schwarz) from one below 1, "
             .. "at most 3n u, divided by a D entry >= 2n-2: about 2 u with the divisor's error. Errors of earlier "
             .. "entries enter with weights d[k] |L[j][k]| / d[j] summing below 1 + 1/n: to first order they add a "
             .. "few u, and aligned over every column (no order of the sums meets that) at most a few n u. "
             .. "Kernel and reference together: 8 n u of each buffer's largest entry, in any order of the sums "
             .. "(rows, columns, blocks, FMA). Single precision rounds A alone by 2^-24 relative: about n 2^-23 "
             .. "in D."},
    techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

-- Names of a block transform's buffers: the real and imaginary inputs and the interleaved
-- output (none a local of the kernels).
local DFT_NAMES = {{re = "re", im = "im", out = "y"}, {re = "xr", im = "xi", out = "out"},
                   {re = "real", im = "imag", out = "z"}, {re = "ar", im = "ai", out = "res"}}
local DFT_SIZES = {1 << 16, 3 << 15, 1 << 17, 3 << 16}

-- A batch of small discrete Fourier transforms: n complex values (separate real and
-- imaginary arrays) in n/M blocks of M, each block transformed by the M-point DFT (forward
-- or inverse, unscaled), the results written interleaved. A block is M consecutive values
-- or a column of the M x (n/M) matrix (the strided pass of a four-step transform); so is
-- an output block. The output is interleaved so that its largest entry bounds every
-- block's norm (Parseval), which the check's scale needs.
function family.dft_blocks(rng)
  local v = rng:pick(DFT_NAMES)
  local M = rng:pick({2, 4, 8, 16})
  local forward = rng:chance(0.5)
  local strided_in, strided_out = rng:chance(0.35), rng:chance(0.35)
  local proto = string.format("void NAME(int n, const double *%s, const double *%s, double *%s)", v.re, v.im, v.out)
  local sign = forward and "-" or ""
  -- the index of value j of block b, in words and in C (nb = n / M blocks)
  local function at(strided, b, j)
    return strided and string.format("%s*(n/%d) + %s", j, M, b) or string.format("%s*%d + %s", b, M, j)
  end
  local function cat(strided, b, j)
    return strided and string.format("(long)%s * nb + %s", j, b) or string.format("(long)%s * %d + %s", b, M, j)
  end
  local blocks = strided_in
    and string.format("block b (0 <= b < n/%d) is the %d values x_{b,j} = %s[%s] + i*%s[%s], j = 0..%d (column b of "
                      .. "the %d x (n/%d) row-major matrices %s and %s)", M, M, v.re, at(true, "b", "j"), v.im,
                      at(true, "b", "j"), M - 1, M, M, v.re, v.im)
    or string.format("block b (0 <= b < n/%d) is the %d consecutive values x_{b,j} = %s[%s] + i*%s[%s], j = 0..%d",
                     M, M, v.re, at(false, "b", "j"), v.im, at(false, "b", "j"), M - 1)
  local transform
  if rng:chance(0.5) then
    transform = string.format("Y_{b,k} = sum over j = 0..%d of x_{b,j} * exp(%s2*pi*i*j*k/%d) for 0 <= k < %d "
                              .. "(i the imaginary unit, no scaling)", M - 1, sign, M, M)
  else
    local t = string.format("t = 2*pi*j*k/%d", M)
    transform = forward
      and string.format("Y_{b,k} has real part sum over j = 0..%d of (Re x_{b,j} * cos(t) + Im x_{b,j} * sin(t)) "
                        .. "and imaginary part sum over j of (Im x_{b,j} * cos(t) - Re x_{b,j} * sin(t)), %s, for "
                        .. "0 <= k < %d (the forward DFT, unscaled)", M - 1, t, M)
      or string.format("Y_{b,k} has real part sum over j = 0..%d of (Re x_{b,j} * cos(t) - Im x_{b,j} * sin(t)) "
                       .. "and imaginary part sum over j of (Im x_{b,j} * cos(t) + Re x_{b,j} * sin(t)), %s, for "
                       .. "0 <= k < %d (the inverse DFT, unscaled)", M - 1, t, M)
  end
  local out = strided_out
    and string.format("write Y_{b,k} interleaved at position p = k*(n/%d) + b of %s: %s[2*p] its real part, "
                      .. "%s[2*p + 1] its imaginary part (%s holds 2n values)", M, v.out, v.out, v.out, v.out)
    or string.format("write Y_{b,k} interleaved at position p = b*%d + k of %s: %s[2*p] its real part, "
                     .. "%s[2*p + 1] its imaginary part (%s holds 2n values)", M, v.out, v.out, v.out, v.out)
  local statement = string.format("%s and %s hold n complex values (real and imaginary parts), n a multiple of %d, "
                                  .. "in n/%d blocks of %d: %s. Transform every block by the %d-point discrete Fourier "
                                  .. "transform: %s; and %s.", v.re, v.im, M, M, M, blocks, M, transform, out)
  -- the twiddle's sine with the transform's sign: forward exp(-i t) = cos t - i sin t
  local sn = forward and "sin(t)" or "-sin(t)"
  local n = rng:pick(DFT_SIZES)
  local reference = string.format([[#include <math.h>
%s {
  const double pi = acos(-1.0);
  const long nb = n / %d;
  for (long b = 0; b < nb; ++b)
    for (int k = 0; k < %d; ++k) {
      double sr = 0, si = 0;
      for (int j = 0; j < %d; ++j) {
        /* the angle reduced below 2 pi: (j k) mod %d */
        const double t = 2.0 * pi * ((j * k) %% %d) / %d;
        const double c = cos(t), sn = %s;
        const double r = %s[%s], s = %s[%s];
        sr += r * c + s * sn;
        si += s * c - r * sn;
      }
      const long p = %s;
      %s[2 * p] = sr;
      %s[2 * p + 1] = si;
    }
}
]], proto, M, M, M, M, M, M, sn, v.re, cat(strided_in, "b", "j"), v.im, cat(strided_in, "b", "j"),
    cat(strided_out, "b", "k"), v.out, v.out)
  -- a table of the M x M twiddles once, then blocks in chunks over threads, each chunk's
  -- outputs accumulated term by term, vectorised across its blocks
  local optimised = string.format([[#include <math.h>
%s {
  const double pi = acos(-1.0);
  const long nb = n / %d;
  double c[%d * %d], sn[%d * %d];
  for (int k = 0; k < %d; ++k)
    for (int j = 0; j < %d; ++j) {
      const double t = 2.0 * pi * ((j * k) %% %d) / %d;
      c[k * %d + j] = cos(t);
      sn[k * %d + j] = %s;
    }
#pragma omp parallel for schedule(static)
  for (long b0 = 0; b0 < nb; b0 += 64) {
    const long b1 = b0 + 64 < nb ? b0 + 64 : nb;
    double accr[64], acci[64];
    for (int k = 0; k < %d; ++k) {
      for (long b = b0; b < b1; ++b) accr[b - b0] = acci[b - b0] = 0;
      for (int j = 0; j < %d; ++j) {
        const double cw = c[k * %d + j], sw = sn[k * %d + j];
#pragma omp simd
        for (long b = b0; b < b1; ++b) {
          const double r = %s[%s], s = %s[%s];
          accr[b - b0] += r * cw + s * sw;
          acci[b - b0] += s * cw - r * sw;
        }
      }
      for (long b = b0; b < b1; ++b) {
        const long p = %s;
        %s[2 * p] = accr[b - b0];
        %s[2 * p + 1] = acci[b - b0];
      }
    }
  }
}
]], proto, M, M, M, M, M, M, M, M, M, M, M, sn, M, M, M, M, v.re, cat(strided_in, "b", "j"), v.im,
    cat(strided_in, "b", "j"), cat(strided_out, "b", "k"), v.out, v.out)
  local factor = math.ceil(4 * math.sqrt(M) * (2 * M + 14))
  return {
    statement = statement, prototype = proto,
    args = {n = {value = "n"}, [v.re] = {count = "n"}, [v.im] = {count = "n"}, [v.out] = {count = "2 * n"}},
    sizes = {train = {n = n}, heldout = {n = n + 48}, test = {n = 6 * M}},
    flops = 8 * M .. "*n", bytes = "32*n", roofline = M >= 8 and "compute" or "memory",
    bound = {factor = factor, scale = "output", why = string.format("each output part is a sum of %d products of an "
             .. "input part and a twiddle (|cos|, |sin| <= 1): in any order its roundings err by at most %d u times "
             .. "the block's sum of |Re x_j| + |Im x_j|, and twiddles from cos and sin of the angle reduced below "
             .. "2 pi (rounded by at most 2 u relative; libm within 1 ulp), or from an exact table, err by at most "
             .. "14 u each: together %d u sum_j (|Re x_j| + |Im x_j|) <= %d sqrt(%d) u ||x_b||_2. By Parseval the "
             .. "block's largest |Y_k| is at least ||x_b||_2, and the interleaved output's largest entry at least "
             .. "that over sqrt 2: %d u times the output's largest entry, the reference's as large again (angles "
             .. "not reduced below 2 pi may miss it). Single precision rounds the inputs by 2^-24 relative.",
             2 * M, 2 * M, 2 * M + 14, 2 * M + 14, 2 * M, factor // 2)},
    techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

-- The Walsh-Hadamard transform of blocks of M values: y_k = sum over j of (-1)^popcount(j & k)
-- x_j, by its butterflies (pairs (a + b, a - b) at distances 1, 2, 4, ...) or its sum.
function family.hadamard(rng)
  local M = rng:pick({4, 8, 16, 32, 64})
  local alpha = rng:chance(0.4) and coefficient(rng) or nil
  local times = alpha and (num(alpha) .. " * ") or ""
  local proto = "void NAME(int n, const double *x, double *y)"
  local stages = ({[4] = "1, 2", [8] = "1, 2, 4"})[M] or ("1, 2, 4, ..., " .. M // 2)  -- the h of the butterflies
  local statement
  if rng:chance(0.5) then
    statement = string.format("x holds n values, n a multiple of %d, in n/%d blocks of %d consecutive values. Compute "
                              .. "the Walsh-Hadamard transform of every block: y[b*%d + k] = %ssum over j = 0..%d of "
                              .. "(-1)^popcount(j & k) * x[b*%d + j] for 0 <= b < n/%d and 0 <= k < %d, where "
                              .. "popcount(j & k) counts the bits j and k have in common.", M, M, M, M, times, M - 1,
                              M, M, M)
  else
    statement = string.format("x holds n values, n a multiple of %d; transform each block of %d consecutive values "
                              .. "on its own: copy it to v[0..%d], then for h = %s in turn replace, for "
                              .. "every j with (j & h) == 0, the pair (v[j], v[j + h]) by (v[j] + v[j + h], v[j] - "
                              .. "v[j + h]); then write y[b*%d + k] = %sv[k] for 0 <= k < %d, b the block's index "
                              .. "(0 <= b < n/%d).", M, M, M - 1, stages, M, times, M, M)
  end
  local reference
  if rng:chance(0.5) then
    reference = string.format([[%s {
  for (long b = 0; b < n; b += %d)
    for (int k = 0; k < %d; ++k) {
      double s = 0;
      for (int j = 0; j < %d; ++j)
        s += __builtin_parity(j & k) ? -x[b + j] : x[b + j];
      y[b + k] = %ss;
    }
}
]], proto, M, M, M, times)
  else
    reference = string.format([[%s {
  for (long b = 0; b < n; b += %d) {
    double v[%d];
    for (int j = 0; j < %d; ++j) v[j] = x[b + j];
    for (int h = 1; h < %d; h *= 2)
      for (int j = 0; j < %d; ++j)
        if ((j & h) == 0) {
          const double p = v[j], q = v[j + h];
          v[j] = p + q;
          v[j + h] = p - q;
        }
    for (int k = 0; k < %d; ++k) y[b + k] = %sv[k];
  }
}
]], proto, M, M, M, M, M, M, times)
  end
  -- blocks over threads; in a block the first stage pairs the inputs as they are read, the
  -- later stages run on whole halves (vectorised)
  local optimised = string.format([[%s {
#pragma omp parallel for schedule(static)
  for (long b = 0; b < n; b += %d) {
    double v[%d];
#pragma omp simd
    for (int j = 0; j < %d; j += 2) {
      const double p = x[b + j], q = x[b + j + 1];
      v[j] = p + q;
      v[j + 1] = p - q;
    }
    for (int h = 2; h < %d; h *= 2)
      for (int s = 0; s < %d; s += 2 * h)
#pragma omp simd
        for (int j = s; j < s + h; ++j) {
          const double p = v[j], q = v[j + h];
          v[j] = p + q;
          v[j + h] = p - q;
        }
#pragma omp simd
    for (int k = 0; k < %d; ++k) y[b + k] = %sv[k];
  }
}
]], proto, M, M, M, M, M, M, times)
  local train = rng:pick(ONE_D)
  local log2m = math.floor(math.log(M, 2) + 0.5)
  local factor = math.ceil(2 * M * math.sqrt(M))
  return {
    statement = statement, prototype = proto,
    args = {n = {value = "n"}, x = {count = "n"}, y = {count = "n"}},
    sizes = {train = {n = train}, heldout = {n = train + 3 * M}, test = {n = 5 * M}},
    flops = (log2m + (alpha and 1 or 0)) .. "*n", bytes = "16*n", roofline = "memory",
    bound = {factor = factor, scale = "output", why = string.format("each output is a sum of %d inputs with signs "
             .. "+-1 (by butterflies or directly): in any order its error is at most %d u times the block's sum of "
             .. "|x_j|, at most %d sqrt(%d) u ||x_b||_2 (and one u more for the scale). The block's outputs have "
             .. "%d times its inputs' sum of squares, so their largest is at least ||x_b||_2 (times the scale): "
             .. "%d u of the output's largest entry, the reference's as large again. Single precision rounds the "
             .. "inputs by 2^-24 relative.", M, M - 1, M - 1, M, M, factor // 2)},
    techniques = {"simd", "omp"},
    reference = reference, optimised = optimised,
  }
end

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
