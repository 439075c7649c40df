-- Families of the generated universe (universe/families.lua gathers them): the building
-- blocks of factorisations and transforms. What they draw, and in what order, is part of
-- the universe's version.

local common = require "universe.common"
local coefficient, num, ONE_D = common.coefficient, common.num, common.ONE_D

local family = {}

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

return family
