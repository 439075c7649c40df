-- What a step's judgement does before its batch, on one thread: each completion's kernel
-- extracted, its calls outside the allowed libraries looked for, its normal form (the text
-- two kernels share to be measured once); evaluate.lua does these for every completion before
-- the first compile. With --baseline=FILE (an extract.lua of another commit, as `git show
-- REV:scripts/lib/method/extract.lua` writes it) that module's library check is timed beside
-- this one's, in the same run, and every text's calls are compared.
--
--   build/engine perf/bench/extract_bench.lua [--completions=A.jsonl,B.jsonl] [--rounds=5]
--       [--baseline=/tmp/extract_old.lua]
local args = require "engine.args"
local evaluate = require "method.evaluate"
local extract = require "method.extract"
local outputs = require "core.outputs"
local sys = require "engine.sys"

local committed = "data/train/h200-2026-11-29-general5-wordings-kernels.jsonl,"
    .. "data/train/h200-2026-11-29-general4-wordings-kernels.jsonl,"
    .. "data/train/h200-2026-11-29-general5-user-kernels.jsonl"
local opts = args.parse(arg, {
  description = "Times the extraction and checks before a batch, against an older extract.lua",
  options = {
    {"completions", committed, "JSON-lines files of completions (text or completion fields), comma-separated"},
    {"rounds", 5, "passes over the completions; the fastest is printed", min = 1},
    {"baseline", "", "an older extract.lua to time beside this one"},
  },
})

local texts = {}
for file in opts.completions:gmatch("[^,]+") do
  for _, row in ipairs(outputs.read_jsonl(file)) do texts[#texts + 1] = row.text or row.completion end
end
local codes = {}
for i, text in ipairs(texts) do codes[i] = extract.kernel(text) or text end

-- The fastest of the rounds of fn over every text, in seconds.
local function fastest(fn, over)
  local best = math.huge
  for _ = 1, opts.rounds do
    local t0 = sys.now()
    for _, x in ipairs(over) do fn(x) end
    best = math.min(best, sys.now() - t0)
  end
  return best
end

print(string.format("%d completions, the fastest of %d rounds", #texts, opts.rounds))
print(string.format("%-26s %9s %12s", "step", "seconds", "per text"))
local function row(name, s) print(string.format("%-26s %9.3f %9.1f us", name, s, s / #texts * 1e6)) end
row("extract.kernel", fastest(function(t) extract.kernel(t) end, texts))
local now = fastest(extract.library_call, codes)
row("library_call", now)
row("normal_form", fastest(evaluate.normal_form, codes))
if opts.baseline ~= "" then
  local old = dofile(opts.baseline)
  local before = fastest(old.library_call, codes)
  row("library_call, baseline", before)
  local differ = 0
  for _, code in ipairs(codes) do
    if table.concat(old.external_calls(code), ",") ~= table.concat(extract.external_calls(code), ",") then
      differ = differ + 1
    end
  end
  print(string.format("library_call: %.2fx the baseline's speed; texts whose calls differ: %d of %d",
                      before / now, differ, #codes))
end
