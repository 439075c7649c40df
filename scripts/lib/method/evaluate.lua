-- From completions to judged kernels: extraction, the library and stage checks, then the
-- sandboxed benchmark for what passed. Failures found before compiling cost nothing.
--
--   local evaluate = require "method.evaluate"
--   local results = evaluate.completions(completions, {
--     bench = bench,                                 -- the engine's, or a stand-in
--     bench_opts = {opt = "O3", timeout = 8, problem = {M = 256, N = 256, K = 256}},
--     stage = 3,                                     -- nil: no stage rules
--     detector = nil,                                -- override the stage's detector
--     isa = nil,                                     -- the machine's vector ISA: the stage
--                                                       check notes wider vectors (beyond_isa)
--     task = nil,                                    -- a task of the suite (its function,
--                                                       its stage ladder); nil: matmul
--     cuda = nil,                                    -- a CUDA task's spec: device code read
--   })                                                  from ```cuda blocks, judged by
--                                                       ctx.bench (cuda_eval.bench)
--   local pending = evaluate.start(completions, ctx)  -- with ctx.background: the benchmark
--   ...                                                   runs while the caller goes on
--   local results = pending:finish()
--
-- The paper's patterns ("regex") are checked before compiling, so a kernel that breaks its
-- stage costs nothing. The front end's features come with the benchmark's result: the
-- kernel is parsed once, in its sandboxed child, never in the engine.
--   results[i].status, .gflops, .code, .message, .techniques, .stage_check, .reason
--   (.speed and .unit = "GB/s" for a memory-bound task: what its rewards count)
--
-- `reason` says which check failed: "extract", "library" or "stage" for a
-- format/library violation found here; "bench" for anything the benchmark decided.
--
-- Kernels that are the same text once comments and spacing are set aside are measured
-- once per batch (evaluate.share_identical, on by default): the copies get the first
-- one's result, marked `shared_with` (its index) and `shared = "text"`, so identical code
-- earns an identical reward instead of two draws of the node's timing noise, and the batch
-- costs one compile and one set of timed calls less per copy. Kernels of other text that
-- compile to the same object code (renamed variables, reordered declarations) are
-- compiled each but run once by the benchmark (its `share` option): `shared = "code"`,
-- each keeping its own compile report, features and stage check.

local extract = require "method.extract"
local stages = require "method.stages"

local evaluate = {}

evaluate.share_identical = true

-- The text two kernels must share to be measured once: without comments, every run of
-- spaces and line breaks one space, except that a preprocessor line stays a line of its
-- own (a line break ends it). A kernel with a string or character literal keeps its exact
-- text, since what looks like a comment or spacing there is data.
function evaluate.normal_form(code)
  if code:find("[\"']") then return code end
  local text = code:gsub("/%*.-%*/", " "):gsub("//[^\n]*", "")
  local out, run = {}, {}
  local function flush()
    local joined = table.concat(run, " "):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
    if joined ~= "" then out[#out + 1] = joined end
    run = {}
  end
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:find("^%s*#") then
      flush()
      out[#out + 1] = (line:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
    else
      run[#run + 1] = line
    end
  end
  flush()
  return table.concat(out, "\n")
end

-- A judge's record keeps to the fields engine/wire/result_record.hpp declares; those it
-- marks kept stay with a judged kernel.
local record_fields = require("engine.bench").result_fields()
local check_record = require("engine.bench").check_record
local kept = {}
for _, f in ipairs(record_fields) do
  if f.kept then kept[#kept + 1] = f.name end
end

-- A memory-bound task's speed is its GB/s (a compute-bound one's, GFLOPS): what its
-- rewards count (reward.speed).
local function roofline(task)
  if task == nil or task == "matmul" then return "compute" end
  return require("engine.tasks").get(task).roofline
end

-- Applies the stage check to a result; a kernel using a forbidden technique becomes a
-- format violation. Returns whether it passed.
local function judge_stage(result, ctx, features, detector)
  local verdict = stages.for_task(ctx.task).check(ctx.stage, result.code, features,
                               {detector = detector, enforce_introduced = ctx.enforce_introduced,
                                isa = ctx.isa})
  result.stage_check = verdict
  result.techniques = verdict.used
  if not verdict.ok then
    result.status, result.reason, result.message = "format_violation", "stage", verdict.message
    result.gflops = nil
  end
  return verdict.ok
end

-- Before compiling: the patterns need only the source. Returns whether the kernel keeps
-- its stage's rules, or nil when the check waits for the benchmark's features.
local function check_before(r, ctx)
  local d = ctx.detector or stages.for_task(ctx.task).get(ctx.stage).detector or "regex"
  if d == "regex" then return judge_stage(r, ctx, nil, "regex") end
  return nil
end

-- After the benchmark: the features its result carries; "auto" falls back to the
-- patterns. A failed kernel without features keeps the benchmark's status.
local function check_after(r, ctx, features)
  local d = ctx.detector or stages.for_task(ctx.task).get(ctx.stage).detector or "regex"
  if features then return judge_stage(r, ctx, features, "features") end
  if d == "auto" then return judge_stage(r, ctx, nil, "regex") end
  if r.status == "ok" then
    error(string.format("evaluate: stage %d is checked by the front end's features, and "
                        .. "the benchmark reported none (use the regex or auto detector)",
                        ctx.stage))
  end
end

-- completions: what policy:sample returns for one prompt (anything with a `text` field) or
-- plain strings. Returns one result per completion, in order.
function evaluate.completions(completions, ctx)
  return evaluate.start(completions, ctx):finish()
end

local Pending = {}
Pending.__index = Pending

-- Starts judging: extraction and the checks before compiling now, the benchmark at once,
-- or in the background when ctx.background is set and the bench can (bench.submit_batch).
-- Returns a pending judgement; its :finish() waits and returns what evaluate.completions
-- does.
function evaluate.start(completions, ctx)
  if type(ctx) ~= "table" or not ctx.bench then
    error("evaluate.completions: ctx.bench is required (the engine's bench module)", 2)
  end
  if ctx.cuda and ctx.stage then
    error("evaluate: a CUDA task has no stage rules (SQD's ladders are CPU techniques)", 2)
  end
  local results, sources, slots, deferred = {}, {}, {}, {}
  local first_of, copies = {}, {}  -- normal form -> its first completion; copy -> original
  for i, c in ipairs(completions) do
    local text = type(c) == "string" and c or c.text
    local r = {completion = text}
    results[i] = r
    local code, why
    if ctx.cuda then code, why = extract.cuda_kernel(text, ctx.cuda.entry)
    else code, why = extract.kernel(text, extract.for_task(ctx.task)) end
    if not code then
      r.status, r.reason, r.message = "format_violation", "extract", why
    else
      r.code = code
      local call = not ctx.cuda and extract.library_call(code)  -- NVRTC links no library
      local passed
      if call then
        r.status, r.reason, r.message = "library_violation", "library", "calls " .. call
      elseif ctx.stage then
        passed = check_before(r, ctx)
      else
        passed = true
      end
      local key = evaluate.share_identical and evaluate.normal_form(code)
      if passed ~= false and not call and key and first_of[key] then
        copies[i] = first_of[key]
      elseif passed ~= false and not call then
        if key then first_of[key] = i end
        sources[#sources + 1] = code
        slots[#slots + 1] = i
        deferred[#slots] = passed == nil
      end
    end
  end
  local p = setmetatable({results = results, slots = slots, deferred = deferred, ctx = ctx,
                          count = #sources, copies = copies}, Pending)
  local opts = ctx.bench_opts or {}
  if not evaluate.share_identical and opts.share == nil then  -- every kernel measured
    local every = {share = false}
    for k, v in pairs(opts) do every[k] = v end
    opts = every
  end
  if #sources > 0 then
    if ctx.background and ctx.bench.submit_batch then
      p.batch = ctx.bench.submit_batch(sources, opts)
    else
      p.measured = ctx.bench.evaluate_batch(sources, opts)
    end
  end
  return p
end

-- Waits for the benchmark (when it runs in the background) and completes the results.
function Pending:finish()
  if self.done then return self.results end
  local measured = self.measured or (self.batch and self.batch:wait()) or {}
  self.batch, self.done = nil, true
  if #measured ~= self.count then
    error(string.format("evaluate: the benchmark returned %d results for %d kernels",
                        #measured, self.count))
  end
  local ctx = self.ctx
  for j, m in ipairs(measured) do
    local problem = check_record(m)
    if problem then error(string.format("evaluate: the judge's record of kernel %d: %s", self.slots[j], problem), 0) end
    local r = self.results[self.slots[j]]
    for _, k in ipairs(kept) do r[k] = m[k] end
    if m.unit then r.speed, r.unit = m.speed, m.unit  -- the judge's own scale (a CUDA task's)
    elseif roofline(ctx.task) == "memory" and r.status == "ok" then r.speed, r.unit = r.gbps, "GB/s" end
    r.reason = "bench"
    if m.same_code_as then r.shared_with, r.shared = self.slots[m.same_code_as + 1], "code" end
    if self.deferred[j] then check_after(r, ctx, m.features) end
    if not r.techniques and r.status == "ok" and not ctx.cuda then
      r.techniques = stages.list(m.features and stages.from_features(m.features)
                                 or stages.detect(r.code))
    end
  end
  for i, original in pairs(self.copies) do
    local r, from = self.results[i], self.results[original]
    for k, v in pairs(from) do
      if k ~= "completion" and k ~= "code" then r[k] = v end
    end
    r.shared_with, r.shared = original, "text"
  end
  return self.results
end

-- Counts per status over a list of results: {ok = 3, compile_error = 1, ...}.
function evaluate.counts(results)
  local counts = {}
  for _, r in ipairs(results) do counts[r.status] = (counts[r.status] or 0) + 1 end
  return counts
end

return evaluate
