-- From completions to judged kernels: extraction, the library and stage checks, then the
-- sandboxed benchmark for what passed. Failures found before compiling cost nothing.
--
--   local evaluate = require "evaluate"
--   local results = evaluate.completions(completions, {
--     bench = bench,                                 -- the engine's, or a stand-in
--     bench_opts = {opt = "O3", timeout = 8, problem = {M = 256, N = 256, K = 256}},
--     stage = 3,                                     -- nil: no stage rules
--     detector = nil,                                -- override the stage's detector
--   })
--   results[i].status, .gflops, .code, .message, .techniques, .stage_check, .reason
--
-- `reason` says which check failed: "extract", "library" or "stage" for a
-- format/library violation found here; "bench" for anything the benchmark decided.

local extract = require "extract"
local stages = require "stages"

local evaluate = {}

-- The fields of a benchmark result kept with a judged kernel.
local kept = {"status", "gflops", "times", "min", "median", "compile_ms", "max_rel_error",
              "message", "backend", "features"}

local function judge_stage(result, ctx, features)
  local verdict = stages.check(ctx.stage, result.code, features,
                               {detector = ctx.detector, enforce_introduced = ctx.enforce_introduced})
  result.stage_check = verdict
  result.techniques = verdict.used
  if not verdict.ok then
    result.status, result.reason, result.message = "format_violation", "stage", verdict.message
    result.gflops = nil
  end
  return verdict.ok
end

-- Whether the stage is checked before compiling (the patterns need only the source)
-- or after (the front end's features come with the benchmark result).
local function checks_before(ctx)
  if not ctx.stage then return false end
  local d = ctx.detector or stages.get(ctx.stage).detector or "regex"
  return d == "regex"
end

-- completions: a list of {text = ...} (what policy:sample returns for one prompt) or of
-- plain strings. Returns one result per completion, in order.
function evaluate.completions(completions, ctx)
  if type(ctx) ~= "table" or not ctx.bench then
    error("evaluate.completions: ctx.bench is required (the engine's bench module)", 2)
  end
  local results, sources, slots = {}, {}, {}
  for i, c in ipairs(completions) do
    local text = type(c) == "table" and c.text or c
    local r = {completion = text}
    results[i] = r
    local code, why = extract.kernel(text)
    if not code then
      r.status, r.reason, r.message = "format_violation", "extract", why
    else
      r.code = code
      local call = extract.library_call(code)
      if call then
        r.status, r.reason, r.message = "library_violation", "library", "calls " .. call
      elseif not checks_before(ctx) or judge_stage(r, ctx, nil) then
        sources[#sources + 1] = code
        slots[#slots + 1] = i
      end
    end
  end

  if #sources > 0 then
    local measured = ctx.bench.evaluate_batch(sources, ctx.bench_opts or {})
    if #measured ~= #sources then
      error(string.format("evaluate: the benchmark returned %d results for %d kernels",
                          #measured, #sources))
    end
    for j, m in ipairs(measured) do
      local r = results[slots[j]]
      for _, k in ipairs(kept) do r[k] = m[k] end
      r.reason = "bench"
      if ctx.stage and not checks_before(ctx) then judge_stage(r, ctx, m.features) end
      if not r.techniques and r.status == "ok" then
        r.techniques = stages.list(m.features and stages.from_features(m.features)
                                   or stages.detect(r.code))
      end
    end
  end
  return results
end

-- Counts per status over a list of results: {ok = 3, compile_error = 1, ...}.
function evaluate.counts(results)
  local counts = {}
  for _, r in ipairs(results) do counts[r.status] = (counts[r.status] or 0) + 1 end
  return counts
end

return evaluate
