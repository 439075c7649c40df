-- Statistics over seeds: intervals, exact tests of paired differences, and the power of
-- a planned number of seeds. Pure functions of numbers; seed_results.lua and the
-- protocol's tools read runs and call these.
--
--   local stats = require "core.stats"
--   stats.interval({1.2, 3.4, 2.2})          -- {n, mean, sd, half, lo, hi}: Student t, 95%
--   stats.sign_test({+3, -1, +4, +2})        -- {n, positive, p}: exact, two-sided
--   stats.permutation_test({+3, -1, +4})     -- {n, p, exact}: sign flips of the mean
--   stats.power{effect = 10, sd = 12, n = 8} -- {t =, sign =, permutation =}: shares rejecting
--   stats.seeds_for{effect = 10, sd = 12}    -- the fewest seeds reaching the target power

local rngs = require "engine.rng"

local stats = {}

---------------------------------------------------------------------------------------
-- Intervals
---------------------------------------------------------------------------------------

-- The 0.975 quantiles of Student's t for 1..30 degrees of freedom, then 40, 60, 120 and
-- the normal limit: the half-width of a two-sided 95% interval is t * sd / sqrt(n).
stats.t975 = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622,
              2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009,
              2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518,
              2.0484, 2.0452, 2.0423}
local t975_beyond = {{40, 2.0211}, {60, 2.0003}, {120, 1.9799}, {math.huge, 1.9600}}

-- t(0.975, df); between two tabulated degrees of freedom the smaller one's (a slightly
-- wider, conservative interval).
function stats.t_quantile(df)
  df = math.floor(df)
  if df < 1 then return nil end
  if df <= #stats.t975 then return stats.t975[df] end
  local q = stats.t975[#stats.t975]
  for _, p in ipairs(t975_beyond) do if df >= p[1] then q = p[2] end end
  return q
end

-- The finite numbers of a table (a list, or values keyed by seed), in key order for lists.
local function numbers(values)
  local xs = {}
  for _, v in pairs(values) do if type(v) == "number" and v == v and math.abs(v) ~= math.huge then xs[#xs + 1] = v end end
  return xs
end

-- The median of the numbers in values (values is not reordered); nil when empty.
function stats.median(values)
  local v = table.move(values, 1, #values, 1, {})
  table.sort(v)
  if #v == 0 then return nil end
  if #v % 2 == 1 then return v[(#v + 1) // 2] end
  return 0.5 * (v[#v // 2] + v[#v // 2 + 1])
end

-- Mean and 95% interval of the numbers in values (nils are skipped): {n =, mean =, sd =,
-- half =, lo =, hi =}; half, lo and hi are nil with fewer than two values.
function stats.interval(values)
  local xs = numbers(values)
  local n = #xs
  local iv = {n = n}
  if n == 0 then return iv end
  local sum = 0
  for _, x in ipairs(xs) do sum = sum + x end
  iv.mean = sum / n
  if n < 2 then return iv end
  local ss = 0
  for _, x in ipairs(xs) do ss = ss + (x - iv.mean) ^ 2 end
  iv.sd = math.sqrt(ss / (n - 1))
  iv.half = stats.t_quantile(n - 1) * iv.sd / math.sqrt(n)
  iv.lo, iv.hi = iv.mean - iv.half, iv.mean + iv.half
  return iv
end

-- The interval of a difference of two independent groups' means (Welch: each its own
-- variance, Welch-Satterthwaite degrees of freedom, rounded down): {n =, mean =, half =,
-- lo =, hi =}, without half when a side has fewer than two values.
function stats.difference(a_values, b_values)
  local a, b = stats.interval(a_values), stats.interval(b_values)
  local d = {n = math.min(a.n, b.n)}
  if not (a.mean and b.mean) then return d end
  d.mean = a.mean - b.mean
  if not (a.sd and b.sd) then return d end
  local va, vb = a.sd ^ 2 / a.n, b.sd ^ 2 / b.n
  local se = math.sqrt(va + vb)
  if se == 0 then
    d.half = 0
  else
    local df = (va + vb) ^ 2 / (va ^ 2 / (a.n - 1) + vb ^ 2 / (b.n - 1))
    d.half = stats.t_quantile(math.max(1, df)) * se
  end
  d.lo, d.hi = d.mean - d.half, d.mean + d.half
  return d
end

---------------------------------------------------------------------------------------
-- Exact tests of paired differences (no assumption of normality)
---------------------------------------------------------------------------------------

-- log of n choose k, for binomial tails that stay exact in doubles up to thousands.
local function log_choose(n, k)
  local s = 0
  for i = 1, k do s = s + math.log(n - k + i) - math.log(i) end
  return s
end

-- Two-sided exact sign test of "the median difference is 0": zeros are dropped; p is
-- twice the smaller binomial(n, 1/2) tail, at most 1. {n =, positive =, p =}; p = 1
-- without values. With n seeds the smallest p is 2^(1-n): 4 seeds can never reach 0.05.
function stats.sign_test(values)
  local n, pos = 0, 0
  for _, x in ipairs(numbers(values)) do
    if x ~= 0 then n, pos = n + 1, pos + (x > 0 and 1 or 0) end
  end
  if n == 0 then return {n = 0, positive = 0, p = 1} end
  local k = math.min(pos, n - pos)
  local tail = 0
  for i = 0, k do tail = tail + math.exp(log_choose(n, i) - n * math.log(2)) end
  return {n = n, positive = pos, p = math.min(1, 2 * tail)}
end

-- A reproducible stream of uniform numbers in [0, 1) (engine.rng), independent of Lua's
-- global generator so that a report's p-values do not depend on what ran before.
stats.rng = rngs.uniforms

-- Paired permutation test of "the mean difference is 0": under it each difference's sign
-- is a coin, so p is the share of sign assignments whose |sum| reaches the observed |sum|
-- (two-sided). Exact over all 2^n assignments up to opts.exact_max (16) values, else
-- opts.draws (200000) random ones from opts.seed. {n =, p =, exact =}.
function stats.permutation_test(values, opts)
  opts = opts or {}
  local xs = numbers(values)
  local n = #xs
  if n == 0 then return {n = 0, p = 1, exact = true} end
  local observed = 0
  for _, x in ipairs(xs) do observed = observed + x end
  observed = math.abs(observed)
  local scale = 0
  for _, x in ipairs(xs) do scale = scale + math.abs(x) end
  local tol = 1e-12 * math.max(scale, 1e-300)  -- sums equal up to rounding count as reaching
  local hits, total = 0, 0
  if n <= (opts.exact_max or 16) then
    for mask = 0, (1 << n) - 1 do
      local s = 0
      for i = 1, n do s = s + (((mask >> (i - 1)) & 1) == 1 and -xs[i] or xs[i]) end
      if math.abs(s) >= observed - tol then hits = hits + 1 end
    end
    total = 1 << n
    return {n = n, p = hits / total, exact = true}
  end
  local u = stats.rng(opts.seed or 1)
  total = opts.draws or 200000
  for _ = 1, total do
    local s = 0
    for i = 1, n do s = s + (u() < 0.5 and -xs[i] or xs[i]) end
    if math.abs(s) >= observed - tol then hits = hits + 1 end
  end
  -- the observed assignment counts as one of the draws: p is never 0
  return {n = n, p = (hits + 1) / (total + 1), exact = false}
end

---------------------------------------------------------------------------------------
-- Power: how often a planned experiment detects a given effect
---------------------------------------------------------------------------------------

-- A standard normal draw (Box-Muller) from a uniform stream.
local function normal(u)
  local a = u()
  while a <= 0 do a = u() end
  return math.sqrt(-2 * math.log(a)) * math.cos(2 * math.pi * u())
end

-- The share of simulated experiments of n seeds that reject "no difference" at the 5%
-- level, when per-seed differences are normal with mean `effect` and deviation `sd`:
-- t (the 95% interval excludes 0), sign (exact sign test p < alpha) and permutation
-- (exact sign-flip test p < alpha; simulated over fewer experiments, it costs 2^n).
-- opts: effect, sd, n, alpha (0.05), trials (4000), seed (1).
function stats.power(opts)
  local n, alpha = opts.n, opts.alpha or 0.05
  if not (opts.effect and opts.sd and n) or n < 2 or opts.sd <= 0 then
    error("stats.power: needs effect, sd > 0 and n >= 2", 2)
  end
  local u = stats.rng(opts.seed or 1)
  local trials = opts.trials or 4000
  local perm_trials = math.max(200, math.min(trials, (1 << 22) // (1 << math.min(n, 12))))
  local hit = {t = 0, sign = 0, permutation = 0}
  for trial = 1, trials do
    local xs = {}
    for i = 1, n do xs[i] = opts.effect + opts.sd * normal(u) end
    local iv = stats.interval(xs)
    if iv.lo > 0 or iv.hi < 0 then hit.t = hit.t + 1 end
    if stats.sign_test(xs).p < alpha then hit.sign = hit.sign + 1 end
    if trial <= perm_trials and stats.permutation_test(xs, {exact_max = 12, draws = 2000, seed = trial}).p < alpha then
      hit.permutation = hit.permutation + 1
    end
  end
  return {n = n, t = hit.t / trials, sign = hit.sign / trials, permutation = hit.permutation / perm_trials,
          trials = trials, permutation_trials = perm_trials}
end

-- The fewest seeds (from opts.min_n, 2, to opts.max_n, 40) whose power for opts.test
-- ("t", "sign" or "permutation"; default "t") reaches opts.target (0.8); nil when none
-- does. Also returns the power table it computed, n by n.
function stats.seeds_for(opts)
  local test, target = opts.test or "t", opts.target or 0.8
  local table_ = {}
  for n = opts.min_n or 2, opts.max_n or 40 do
    local p = stats.power{effect = opts.effect, sd = opts.sd, n = n, alpha = opts.alpha,
                          trials = opts.trials, seed = opts.seed}
    table_[#table_ + 1] = p
    if p[test] >= target then return n, table_ end
  end
  return nil, table_
end

return stats
