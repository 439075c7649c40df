-- From completions to judged kernels: which checks run before the benchmark, and how a
-- stage rule judged by the front end's features overrides the benchmark's verdict.
local t = require "engine.test"
local evaluate = require "method.evaluate"

local SIG = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)"
local NAIVE = SIG .. " { for (int i = 0; i < M * N; i++) C[i] = 0; }"
local OMP = "#include <omp.h>\n" .. SIG .. " {\n#pragma omp parallel for\n for (int i = 0; i < M * N; i++) C[i] = 0; }"

-- A bench that records what it was asked and reports every kernel ok at 10 GFLOPS, with
-- the features a front end would give (OpenMP when the source has a pragma).
local function recording_bench(extra)
  local bench = {batches = {}}
  function bench.evaluate_batch(sources, opts)
    bench.batches[#bench.batches + 1] = {sources = sources, opts = opts}
    local out = {}
    for i, code in ipairs(sources) do
      out[i] = {status = "ok", gflops = 10.0, times = {0.1}, compile_ms = 3.0, backend = "test",
                features = {omp = code:find("pragma omp") and {} or false}}
    end
    for _ = 1, extra or 0 do out[#out + 1] = {status = "ok", gflops = 1.0} end
    return out
  end
  return bench
end

t.test("kernels identical but for comments and spacing are measured once, each keeping its record", function()
  local commented = "// the same loop\n" .. NAIVE:gsub("{ for", "{\n   /* zero C */  for")
  t.eq(evaluate.normal_form(commented), evaluate.normal_form(NAIVE))
  t.ne(evaluate.normal_form(NAIVE), evaluate.normal_form(NAIVE:gsub("i%+%+", "i += 1")), "other code")
  t.ne(evaluate.normal_form(OMP), evaluate.normal_form((OMP:gsub("\n#pragma", " #pragma"))),
       "a line break ends a preprocessor line")
  t.eq(evaluate.normal_form("#include <omp.h>\nint  f(void)\n{\n  return 1; }  // one\n"),
       "#include <omp.h>\nint f(void) { return 1; }")
  local quoted = NAIVE:gsub("{ for", '{ const char *s = "a  //b"; for')
  t.eq(evaluate.normal_form(quoted), quoted, "a literal keeps the exact text")
  local bench = recording_bench()
  local results = evaluate.completions({NAIVE, OMP, commented, NAIVE, "no code"}, {bench = bench})
  t.eq(#bench.batches[1].sources, 2, "two distinct kernels measured")
  t.eq(bench.batches[1].sources, {results[1].code, results[2].code}, "the first of each")
  for _, i in ipairs{3, 4} do
    t.eq({results[i].status, results[i].gflops, results[i].shared_with}, {"ok", 10.0, 1})
  end
  t.eq(results[3].code, evaluate.completions({commented}, {bench = recording_bench()})[1].code,
       "a copy keeps its own text")
  t.eq({results[1].shared_with, results[2].shared_with, results[5].status}, {nil, nil, "format_violation"})
  t.eq({results[3].shared, results[4].shared}, {"text", "text"})
  t.eq(bench.batches[1].opts.share, nil, "the benchmark shares identical object code by default")
  evaluate.share_identical = false
  local all = recording_bench()
  evaluate.completions({NAIVE, NAIVE}, {bench = all, bench_opts = {threads = 3}})
  evaluate.share_identical = true
  t.eq(#all.batches[1].sources, 2, "switched off, every kernel is measured")
  t.eq(all.batches[1].opts, {threads = 3, share = false}, "and the benchmark runs every one")
end)

t.test("a kernel the benchmark ran under another's object code points at that kernel's completion", function()
  local bench = recording_bench()
  local plain = bench.evaluate_batch
  function bench.evaluate_batch(sources, opts)
    local out = plain(sources, opts)
    out[3].same_code_as, out[3].features = 1, {omp = {}}  -- the benchmark's index: from 0
    return out
  end
  local renamed = (NAIVE:gsub("i%+%+", "++i"))
  local results = evaluate.completions({"no code", NAIVE, OMP, renamed}, {bench = bench})
  t.eq(#bench.batches[1].sources, 3)
  t.eq({results[4].shared_with, results[4].shared, results[4].status}, {3, "code", "ok"})
  t.eq(results[4].code, renamed .. "\n", "its own text")
  t.eq(results[4].techniques, {"omp"}, "its own features, as the benchmark reported them")
  t.eq({results[2].shared_with, results[3].shared_with}, {nil, nil})
end)

t.test("a stored sample says whose measurement it carries", function()
  local run = store.open(t.tmpdir() .. "/run", {config = {experiment = "experiment1", config = {lr = 0}}})
  local s = setmetatable({run = run}, require("run.session").Session)
  local results = evaluate.completions({NAIVE, NAIVE .. "\n// again", OMP}, {bench = recording_bench()})
  s:record("prompt", {{}, {}, {}}, results, {iteration = 1, config_id = "c"})
  local stored = run:samples()
  t.eq(#stored, 3)
  t.eq({stored[2].extra.shared, stored[2].extra.shared_with}, {"text", 1})
  t.eq({stored[1].extra.shared, stored[3].extra.shared}, {nil, nil})
  run:close()
end)

t.test("format and library violations never reach the benchmark", function()
  local bench = recording_bench()
  local results = evaluate.completions({"no code here", {text = "```c\n" .. NAIVE .. "\n```"},
                                        (NAIVE:gsub("C%[i%] = 0", "cblas_dgemm(101, 111, 111, M, N, K)"))}, {bench = bench})
  t.eq({results[1].status, results[1].reason}, {"format_violation", "extract"})
  t.eq({results[2].status, results[2].gflops, results[2].backend}, {"ok", 10.0, "test"})
  t.eq({results[3].status, results[3].reason, results[3].message},
       {"library_violation", "library", "calls cblas_dgemm"})
  t.eq(#bench.batches, 1)
  t.eq(#bench.batches[1].sources, 1)
  t.eq(results[2].techniques, {})
  t.eq(evaluate.counts(results), {format_violation = 1, ok = 1, library_violation = 1})
end)

t.test("the paper's pattern check runs before compiling", function()
  local bench = recording_bench()
  local results = evaluate.completions({NAIVE, OMP}, {bench = bench, stage = 3,
                                                      bench_opts = {opt = "O3"}})
  t.eq(results[1].status, "ok")
  t.eq({results[2].status, results[2].reason, results[2].message},
       {"format_violation", "stage", "stage 3 forbids omp"})
  t.eq(#bench.batches[1].sources, 1, "the forbidden kernel was not compiled")
  t.eq(bench.batches[1].opts, {opt = "O3"})
  t.eq(results[1].stage_check.detector, "regex")
end)

t.test("with the front end's features the check follows the benchmark", function()
  local bench = recording_bench()
  local results = evaluate.completions({NAIVE, OMP}, {bench = bench, stage = 3, detector = "auto"})
  t.eq(#bench.batches[1].sources, 2, "both kernels were compiled")
  t.eq(results[1].status, "ok")
  t.eq(results[1].stage_check.detector, "features")
  t.eq({results[2].status, results[2].reason, results[2].gflops}, {"format_violation", "stage", nil})
  t.eq(results[2].techniques, {"omp"})
end)

t.test("the features check waits for the benchmark, which parsed the kernel", function()
  local bench = recording_bench()
  function bench.features() error("the engine must not parse a kernel itself") end
  local results = evaluate.completions({NAIVE, OMP}, {bench = bench, stage = 3, detector = "features"})
  t.eq(#bench.batches[1].sources, 2, "both kernels went to the benchmark")
  t.eq({results[1].status, results[1].stage_check.detector}, {"ok", "features"})
  t.eq({results[2].status, results[2].reason, results[2].stage_check.detector},
       {"format_violation", "stage", "features"})
end)

t.test("features the benchmark does not report", function()
  local plain = {evaluate_batch = function(sources)
    local out = {}
    for i = 1, #sources do out[i] = {status = i == 1 and "ok" or "compile_error", gflops = 1.0} end
    return out
  end}
  local results = evaluate.completions({NAIVE, OMP}, {bench = plain, stage = 3, detector = "auto"})
  t.eq(results[1].stage_check.detector, "regex", "auto falls back to the patterns")
  t.eq(results[2].status, "format_violation", "the patterns still see the pragma")
  local failed = evaluate.completions({NAIVE, (NAIVE:gsub("i%+%+", "++i"))}, {bench = {evaluate_batch = function()
    return {{status = "compile_error"}, {status = "timeout"}} end}, stage = 3, detector = "features"})
  t.eq({failed[1].status, failed[2].status}, {"compile_error", "timeout"})
  t.raises(function()
    evaluate.completions({NAIVE}, {bench = plain, stage = 3, detector = "features"})
  end, "the benchmark reported none")
end)

t.test("nothing to benchmark, and a benchmark that miscounts", function()
  local bench = recording_bench()
  evaluate.completions({"x", "y"}, {bench = bench})
  t.eq(#bench.batches, 0)
  t.raises(function() evaluate.completions({NAIVE}, {bench = recording_bench(1)}) end,
           "returned 2 results for 1 kernels")
  t.raises(function() evaluate.completions({NAIVE}, {}) end, "ctx.bench is required")
end)

t.run()
