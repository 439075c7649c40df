-- What the synthetic corpus teaches, measured: the stage-6 answers of a kernelgen corpus
-- (Experiment 1's fixed prompts and stage-6 "write" prompts, targets with the corpus's
-- defect rate) judged exactly as the experiments judge completions (extraction, the
-- stage check, the sandboxed benchmark): compile and verification rates, technique
-- combinations, and the GFLOPS range against the paper's naive seed kernel and OpenBLAS
-- measured in the same run.
--
--   build/engine perf/kernelgen/rates.lua [--n=200] [--size=128] [--seed=1] [--defect_rate=0.15]
--   ENGINE_TARGET=x86-64-v3 build/engine perf/kernelgen/rates.lua   # as without AVX-512
--
-- The corpus's prompts name the machine's vector ISA (--isa=auto), so its answers are
-- kernels the machine can compile.
local args = require "engine.args"
local kernelgen = require "kernelgen"
local evaluate = require "method.evaluate"
local prompts = require "method.prompts"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Compile/verify rates and GFLOPS of kernelgen's stage-6 answers",
  options = {
    {"n", 200, "stage-6 examples"},
    perf.size(128),
    {"seed", 1, "corpus seed"},
    {"defect_rate", 0.15, "share of defective targets"},
    perf.threads(),
    {"c_init", "zero", "C before each call: zero (the experiments' default) or nan"},
    {"isa", "auto", "vector ISA of the prompts and answers: auto (the machine's), avx512, avx2",
     choices = {"auto", "avx512", "avx2"}},
  },
})

local isa = prompts.isa(opts.isa)
if isa ~= "avx512" then isa = "avx2" end  -- kernelgen writes AVX-512 or AVX2 kernels
local list = kernelgen.corpus(opts.n, {seed = opts.seed, defect_rate = opts.defect_rate, isa = isa,
                                       mix = {fixed = 0.55, write = 0.45}, write_stage6 = 1.0})
local completions = {}
for i, ex in ipairs(list) do completions[i] = ex.completion end

local problem = {M = opts.size, N = opts.size, K = opts.size, c_init = opts.c_init}
local bench_opts = {problem = problem, threads = opts.threads, timeout = 8}
local t0 = os.time()
local results = evaluate.completions(completions, {bench = bench, bench_opts = bench_opts, stage = 6})
local elapsed = os.time() - t0
local seed = bench.evaluate(prompts.seed_kernel, bench_opts)
local blas = bench.reference(bench_opts)

local counts = evaluate.counts(results)
local n = #results
local compiled = n - (counts.format_violation or 0) - (counts.library_violation or 0)
                 - (counts.compile_error or 0)
local gflops, by_set = {}, {}
for i, r in ipairs(results) do
  if r.status == "ok" then
    gflops[#gflops + 1] = r.gflops
    local key = #list[i].techniques > 0 and table.concat(list[i].techniques, "+") or "plain"
    local s = by_set[key] or {n = 0, sum = 0, max = 0}
    s.n, s.sum, s.max = s.n + 1, s.sum + r.gflops, math.max(s.max, r.gflops)
    by_set[key] = s
  end
end
table.sort(gflops)
local st = kernelgen.stats(list)
local m = bench.machine()

print(string.format("machine: %s, %d cores, %s (target %s); %d stage-6 examples for %s at %d^3 (seed %d, defect rate %.2f, C starts %s); %d s",
                    m.model, m.cores, m.simd, m.target, n, isa, opts.size, opts.seed, opts.defect_rate,
                    opts.c_init, elapsed))
print(string.format("compile rate %.1f %% (%d/%d), verify rate %.1f %% (%d/%d)",
                    100 * compiled / n, compiled, n, 100 * (counts.ok or 0) / n, counts.ok or 0, n))
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do print(string.format("  %-20s %d", k, counts[k])) end
print(string.format("technique combinations %d, configurations %d, top text share %.3f, lines %d..%d (mean %.0f)",
                    st.technique_sets, st.combos, st.top_text_share, st.lines.min, st.lines.max, st.lines.mean))
if #gflops > 0 then
  print(string.format("GFLOPS of verified kernels: min %.2f, median %.2f, max %.2f",
                      gflops[1], gflops[(#gflops + 1) // 2], gflops[#gflops]))
end
print(string.format("naive seed kernel %.2f GFLOPS (%s), OpenBLAS %.2f GFLOPS (%s)",
                    seed.gflops, seed.status, blas.gflops, blas.status))
local sets = {}
for k in pairs(by_set) do sets[#sets + 1] = k end
table.sort(sets, function(a, b) return by_set[a].sum / by_set[a].n > by_set[b].sum / by_set[b].n end)
print("mean / max GFLOPS per technique set:")
for _, k in ipairs(sets) do
  local s = by_set[k]
  print(string.format("  %-55s n=%-3d %7.2f %7.2f", k, s.n, s.sum / s.n, s.max))
end
