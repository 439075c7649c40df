-- feedback.text: a failure in the engine's own words (so SQD's repair prompts read as they
-- always did), a success as speed, share of the roofline, calls, techniques, counters and
-- remarks; bounded, and the same text for the same record.
local t = require "engine.test"
local feedback = require "method.feedback"
local sqd = require "method.sqd"
local prompts = require "method.prompts"

local WRONG = "wrong result in call 2: C[17] = nan, expected 0.25 (error nan > 1.1e-13, the bound 4 K u (|A||B|))"

t.test("a failure is the engine's message, bounded", function()
  t.eq(feedback.text({status = "verification_error", message = WRONG}), WRONG)
  t.eq(feedback.text({status = "compile_error"}), "(no message: a compile error)")
  local long = feedback.text({status = "compile_error", message = string.rep("x", 5000)})
  t.eq(#long, feedback.max_chars)
  t.ok(long:sub(-4) == "\n...", "says it was cut")
  t.eq(#feedback.text({status = "timeout", message = string.rep("y", 300)}, {max_chars = 100}), 100)
  t.raises(function() feedback.text("ok") end, "a result table")
end)

t.test("a success gives speed, share of the limit, calls and techniques, the same each time", function()
  local r = {status = "ok", gflops = 95.75, times = {0.000351, 0.000349, 0.000362},
             techniques = {"register_blocking", "simd", "omp"}}
  local text = feedback.text(r, {roofline = 166.1, threads = 2})
  t.eq(text, "Correct. Speed: 95.8 GFLOPS, 57.6% of this machine's limit of 166 GFLOPS on 2 threads.\n"
           .. "Timed calls: 3, fastest 0.349 ms, slowest 0.362 ms.\n"
           .. "Techniques found: register_blocking, simd, omp.")
  t.eq(feedback.text(r, {roofline = 166.1, threads = 2}), text, "stable")
  -- a memory-bound task speaks in its own unit
  local m = feedback.text({status = "ok", gflops = 2.1, speed = 21.5, unit = "GB/s"}, {roofline = 28.0})
  t.contains(m, "Speed: 21.5 GB/s, 76.8% of this machine's limit of 28.0 GB/s.")
  -- counters and remarks, where the record has them, in a fixed order
  local c = feedback.text({status = "ok", gflops = 10, counters = {instructions = 123456, cycles = 98765.4},
                           counters_unavailable = "cache misses: no hardware PMU", remarks = "loop vectorized"})
  t.contains(c, "Counters per call: cycles 98765, instructions 123456. Not counted: cache misses: no hardware PMU.")
  t.contains(c, "Compiler remarks:\nloop vectorized")
end)

t.test("SQD's repair prompt carries feedback.text, which a script may replace", function()
  local node = {id = 7, stage = 3, status = "verification_error", code = "void f(void) {}", message = WRONG}
  local pick = {node = node, action = "repair", stage = 3}
  local text = prompts.render(sqd.prompt(pick, {M = 64, N = 64, K = 64}))
  t.contains(text, "The error:\n```\n" .. WRONG .. "\n```")
  local old = sqd.feedback
  sqd.feedback = function(n) return "custom words for " .. n.id end
  t.contains(prompts.render(sqd.prompt(pick, {M = 64, N = 64, K = 64})), "custom words for 7")
  sqd.feedback = old
end)

t.run()
