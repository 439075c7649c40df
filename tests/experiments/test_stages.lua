-- Table I and the stage check: the detection on every labelled kernel, every stage's
-- verdict on each of them, and the front end's features as the other detector.
local t = require "engine.test"
local stages = require "method.stages"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local kernel_dir = here .. "/../data/kernels"

local function read(name) return t.read(kernel_dir .. "/" .. name) end

local function sorted(list)
  local copy = {table.unpack(list)}
  table.sort(copy)
  return copy
end

-- The stages each labelled kernel passes, worked out by hand from Table I as stages.lua
-- reads it (stage s allows the first s - 1 of: register blocking, cache blocking, SIMD,
-- OpenMP, prefetch). The failing kernels use no technique, so every stage admits them.
local passes = {
  ["k01_naive_ijk.c"] = {1, 2, 3, 4, 5, 6},
  ["k02_ikj_omp.c"] = {5, 6},
  ["k03_blocked_collapse.c"] = {5, 6},
  ["k04_avx512_rows.c"] = {6},
  ["k05_manual_split.c"] = {5, 6},
  ["k06_avx2_4x8.c"] = {5, 6},
  ["k07_reduction_dot.c"] = {5, 6},
  ["k08_syntax_error.c"] = {1, 2, 3, 4, 5, 6},
  ["k09_wrong_result.c"] = {1, 2, 3, 4, 5, 6},
  ["k10_infinite_loop.c"] = {1, 2, 3, 4, 5, 6},
  ["k11_segfault.c"] = {1, 2, 3, 4, 5, 6},
  ["k12_calls_blas.c"] = {1, 2, 3, 4, 5, 6},
}

t.test("the labelled kernels are all there", function()
  local found = 0
  for _, name in ipairs(sys.listdir(kernel_dir)) do
    if name:match("%.c$") then
      found = found + 1
      t.ok(passes[name], "no expectation for " .. name .. ": add it to this test")
    end
  end
  t.eq(found, 12)
end)

t.test("table I: six stages adding one technique each, in the paper's order", function()
  t.eq(stages.count, 6)
  t.eq(stages.techniques, {"register_blocking", "cache_blocking", "simd", "omp", "prefetch"})
  t.eq(stages.get(1).allowed, {})
  for s = 2, 6 do
    local new = stages.techniques[s - 1]
    t.eq(stages.get(s).introduces, new, "stage " .. s)
    t.eq(#stages.get(s).allowed, s - 1)
    t.eq(stages.get(s).allowed[s - 1], new)
  end
  t.eq(stages.forbidden(1), stages.techniques)
  t.eq(stages.forbidden(4), {"omp", "prefetch"})
  t.eq(stages.forbidden(6), {})
  t.raises(function() stages.get(7) end, "there is no stage 7 (stages are 1 to 6)")
  t.raises(function() stages.get(0) end, "no stage 0")
end)

t.test("pattern detection finds exactly the techniques each labelled kernel names", function()
  for name in pairs(passes) do
    local code = read(name)
    local label = code:match("techniques:%s*([%w_ ]+)")
    if label then
      local want = {}
      for tech in label:gmatch("[%w_]+") do if tech ~= "none" then want[#want + 1] = tech end end
      t.eq(sorted(stages.list(stages.detect(code))), sorted(want), name)
    else
      t.eq(stages.list(stages.detect(code)), {}, name)
    end
  end
end)

t.test("every stage's verdict on every labelled kernel", function()
  for name, stages_passed in pairs(passes) do
    local code = read(name)
    local ok_at = {}
    for _, s in ipairs(stages_passed) do ok_at[s] = true end
    for s = 1, 6 do
      local v = stages.check(s, code)
      t.eq(v.ok, ok_at[s] == true, name .. " at stage " .. s)
      t.eq(v.detector, "regex")
      if not v.ok then t.contains(v.message, "stage " .. s .. " forbids") end
    end
  end
  local v = stages.check(4, read("k04_avx512_rows.c"))
  t.eq(v.forbidden, {"omp", "prefetch"})
  t.eq(v.message, "stage 4 forbids omp, prefetch")
  t.eq(v.used, {"register_blocking", "simd", "omp", "prefetch"})
end)

t.test("comments and strings do not count as techniques", function()
  local code = [[
// use _mm512_fmadd_pd and #pragma omp parallel for, then _mm_prefetch(p, 0)
/* for (ib = 0; ib < M; ib += 64) for (i = ib; ...) */
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  const char *note = "#pragma omp parallel _mm512_add_pd(";
  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) {
    double s = 0; for (int k = 0; k < K; k++) s += A[i*K+k] * B[k*N+j]; C[i*N+j] = s; }
}
]]
  t.eq(stages.list(stages.detect(code)), {})
end)

t.test("pattern details: omp simd, scalar register blocking, small and unnamed tiles", function()
  t.eq(stages.list(stages.detect("#pragma omp simd\nfor (;;) {}")), {"simd"})
  t.eq(stages.list(stages.detect("#pragma omp parallel for simd\nfor (;;) {}")), {"simd", "omp"})
  t.eq(stages.detect("__m256d x = _mm256_loadu_pd(p);").simd, {width = 256})
  t.eq(stages.detect("__m512d x = _mm512_loadu_pd(p);").simd, {width = 512})
  t.eq(stages.list(stages.detect("__builtin_prefetch(p + 64);")), {"prefetch"})
  -- four scalar accumulators over a loop stepping by 4: register blocking
  local unrolled = [[
for (int j = 0; j < N; j += 4) {
  double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  for (int k = 0; k < K; k++) {
    c0 += A[i*K+k] * B[k*N+j]; c1 += A[i*K+k] * B[k*N+j+1];
    c2 += A[i*K+k] * B[k*N+j+2]; c3 += A[i*K+k] * B[k*N+j+3];
  }
}]]
  t.eq(stages.list(stages.detect(unrolled)), {"register_blocking"})
  -- a 4-wide tile is register blocking, a 64-wide one cache blocking
  t.eq(stages.list(stages.detect("for (i = 0; i < M; i += 4) for (ii = i; ii < i + 4; ii++) {}")),
       {"register_blocking"})
  t.eq(stages.list(stages.detect("for (i = 0; i < M; i += 64) for (ii = i; ii < i + 64; ii++) {}")),
       {"cache_blocking"})
  -- a block size the source does not define is taken for a cache block
  t.eq(stages.list(stages.detect("for (kk = 0; kk < K; kk += TILE) for (k = kk; k < kk + TILE; k++) {}")),
       {"cache_blocking"})
  t.eq(stages.list(stages.detect("for (kk = 0; kk < K; kk = kk + 32) for (k = kk; k < K; k++) {}")),
       {"cache_blocking"})
end)

t.test("the front end's features as the detector", function()
  local naive = read("k01_naive_ijk.c")
  local features = {simd = {width = 512}, omp = {parallel_for = 1}, prefetch = false,
                    cache_blocking = true, register_blocking = true, loops = 3}
  -- explicit "features": the structure decides, whatever the source looks like
  local v = stages.check(3, naive, features, {detector = "features"})
  t.eq(v.detector, "features")
  t.eq(v.used, {"register_blocking", "cache_blocking", "simd", "omp"})
  t.eq(v.forbidden, {"simd", "omp"})
  t.eq(v.ok, false)
  t.eq(stages.check(5, naive, features, {detector = "features"}).ok, true)
  -- "auto": features when the result carries them, the patterns otherwise
  t.eq(stages.check(3, naive, features, {detector = "auto"}).detector, "features")
  t.eq(stages.check(3, naive, nil, {detector = "auto"}).detector, "regex")
  t.eq(stages.check(3, naive, nil, {detector = "auto"}).ok, true)
  t.raises(function() stages.check(3, naive, nil, {detector = "features"}) end, "carries none")
  t.raises(function() stages.check(3, naive, nil, {detector = "ast"}) end, "unknown detector 'ast'")
  t.raises(function() stages.from_features("simd") end, "features must be a table")
  -- the stage definition itself can name the detector
  local saved = stages.table[3].detector
  stages.table[3].detector = "features"
  local ok, err = pcall(function()
    t.eq(stages.check(3, naive, {simd = true}).detector, "features")
    t.eq(stages.check(3, naive, {simd = true}).ok, false)
  end)
  stages.table[3].detector = saved
  assert(ok, err)
end)

t.test("the engine's own features decide through their techniques list", function()
  -- the naive kernel with its outer loop parallelised: OpenMP and nothing else
  local naive = read("k01_naive_ijk.c")
  local omp_only = naive:gsub("\n( *)for %(int i", "\n%1#pragma omp parallel for\n%1for (int i", 1)
  t.contains(omp_only, "#pragma omp parallel for\n    for (int i = 0; i < M; i++)")
  local features = kernelc.features(omp_only)
  t.eq(stages.list(stages.from_features(features)), {"omp"})
  t.eq(stages.check(5, omp_only, features, {detector = "features"}).ok, true)
  t.eq(stages.check(4, omp_only, features, {detector = "features"}).forbidden, {"omp"})
  -- the same record without its list: the per-technique entries, OpenMP as "openmp"
  features.techniques = nil
  t.eq(stages.list(stages.from_features(features)), {"omp"})
  t.eq(stages.list(stages.from_features(kernelc.features(naive))), {})
end)

t.test("the SIMD stage is named after the vector ISA", function()
  t.eq(stages.name("simd"), "AVX-512 SIMD intrinsics")
  t.eq(stages.name("simd", "avx512"), stages.names.simd)
  t.eq(stages.name("simd", "avx2"), "AVX2/FMA SIMD intrinsics")
  t.eq(stages.name("omp", "avx2"), "OpenMP parallelisation")
  t.eq(stages.names_for("avx2").simd, "AVX2/FMA SIMD intrinsics")
  t.eq(stages.names_for("avx2").cache_blocking, "cache blocking")
  t.eq(stages.describe(4, "avx2"), {stage = 4, allowed = "register blocking, cache blocking, "
       .. "AVX2/FMA SIMD intrinsics", introduces = "AVX2/FMA SIMD intrinsics"})
  t.eq(stages.describe(4, "avx512").introduces, "AVX-512 SIMD intrinsics")
  t.eq(stages.describe(1).allowed, "none (plain C: loop order, scalar code)")
  t.raises(function() stages.name("simd", "neon") end, "unknown vector ISA 'neon'")
  -- the machine's: what the prompts ask for there
  local simd = bench.machine().simd
  t.ok(stages.isas[simd], "bench.machine().simd is a known ISA: " .. tostring(simd))
  local target = bench.machine().target
  if target == "x86-64-v3" then t.eq(simd, "avx2") end
end)

t.test("the stage check notes vectors wider than the machine's ISA", function()
  local k04, k06 = read("k04_avx512_rows.c"), read("k06_avx2_4x8.c")
  t.eq(stages.check(6, k04, nil, {isa = "avx2"}).beyond_isa, 512)
  t.eq(stages.check(6, k04, nil, {isa = "avx2"}).ok, true, "a stage rule, not an ISA rule")
  t.eq(stages.check(6, k04, nil, {isa = "avx512"}).beyond_isa, nil)
  t.eq(stages.check(6, k06, nil, {isa = "avx2"}).beyond_isa, nil)
  t.eq(stages.check(6, k06, nil, {isa = "sse2"}).beyond_isa, 256)
  t.eq(stages.check(6, k04).beyond_isa, nil, "no ISA given, nothing noted")
  -- the front end's features say the same
  t.eq(stages.check(6, k04, kernelc.features(k04), {detector = "features", isa = "avx2"}).beyond_isa, 512)
  t.eq(stages.check(6, k06, kernelc.features(k06), {detector = "features", isa = "avx2"}).beyond_isa, nil)
  t.eq(stages.vector_bits({width = 256}), 256)
  t.eq(stages.vector_bits({families = {"fma", "avx2"}, width = 4}), 256)
  t.eq(stages.vector_bits({width = 8}), 512)
  t.eq(stages.vector_bits(nil), 0)
  -- on this machine: the AVX-512 kernel is beyond its ISA exactly when it lacks AVX-512
  local simd = bench.machine().simd
  t.eq(stages.check(6, k04, nil, {isa = simd}).beyond_isa, simd ~= "avx512" and 512 or nil, simd)
end)

t.test("the technique a stage introduces is required only when enforced", function()
  local naive = read("k01_naive_ijk.c")
  local v = stages.check(2, naive)
  t.eq(v.ok, true)
  t.eq(v.missing, {"register_blocking"})
  v = stages.check(2, naive, nil, {enforce_introduced = true})
  t.eq(v.ok, false)
  t.eq(v.message, "stage 2 requires register_blocking")
  t.eq(stages.check(1, naive, nil, {enforce_introduced = true}).ok, true)
  t.eq(stages.lowest_for({"omp"}), 5)
  t.eq(stages.lowest_for({}), 1)
  t.eq(stages.lowest_for({"prefetch", "simd"}), 6)
end)

t.test("a task climbs a ladder of its own techniques; matmul climbs Table I", function()
  local L = stages.ladder({"omp", "simd", "unknown_technique"})
  t.eq(L.count, 3)
  t.eq(L.own_techniques, {"simd", "omp"})
  t.eq(L.get(1).allowed, {})
  t.eq(L.get(2).allowed, {"simd"})
  t.eq(L.get(2).introduces, "simd")
  t.eq(#L.get(3).allowed, 5, "the last stage allows all five")
  t.eq(L.get(3).introduces, "omp")
  t.eq(L.forbidden(2), {"register_blocking", "cache_blocking", "omp", "prefetch"})
  local threaded = "void axpy(int n, double a, const double *x, double *y) {\n"
    .. "#pragma omp parallel for\n  for (int i = 0; i < n; ++i) y[i] += a * x[i];\n}\n"
  t.eq(L.check(2, threaded).ok, false)
  t.eq(L.check(2, threaded).message, "stage 2 forbids omp")
  t.eq(L.check(3, threaded).ok, true)
  t.raises(function() L.get(4) end, "stages are 1 to 3")
  t.eq(L.lowest_for({"omp"}), 3)
  t.eq(L.describe(2, "avx2").allowed, "AVX2/FMA SIMD intrinsics")
  t.ok(stages.ladder({"simd", "omp"}) == L, "one ladder per technique list")
  -- the module is Table I's ladder; a task's comes from its spec
  t.ok(stages.for_task("matmul") == stages)
  t.ok(stages.for_task(nil) == stages)
  local axpy = stages.for_task("axpy")
  t.eq(axpy.own_techniques, stages.ladder(bench.task("axpy").techniques).own_techniques)
  t.eq(axpy.count, #axpy.own_techniques + 1)
  t.eq(stages.count, 6, "Table I untouched")
end)

t.run()
