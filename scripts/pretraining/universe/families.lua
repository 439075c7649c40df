-- The families of the generated universe (universe.lua): each draws, from a random
-- generator, one task's spec fields (without its name) and its two kernels, a
-- straightforward one and an optimised one, written for the entry `NAME`. What a family
-- draws, and in what order, is part of the universe's version (universe.version). The
-- first twelve families are here; the factorisations and transforms (version 6) and the
-- signed expressions (version 7) have modules of their own, gathered at the end.

local common = require "universe.common"
local coefficient, maybe, num, polynomial, render = common.coefficient, common.maybe, common.num, common.polynomial,
                                                    common.render
local operations, const_params, input_args, join = common.operations, common.const_params, common.input_args,
                                                   common.join
local ONE_D = common.ONE_D
local one_d, two_d, square = common.one_d, common.two_d, common.square

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
                      {h = "rows", w = "cols", img = "A", f = "K", out = "B"}, {h = "h", w = "w", img = "src", f = "g", out = "dst"}}

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

-- The later families, from their own modules.
for _, more in ipairs({require("universe.factorisations"), (require("universe.signed"))}) do
  for name, draw in pairs(more) do family[name] = draw end
end

return family
