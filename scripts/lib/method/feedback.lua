-- What an evaluation tells the model that wrote the kernel: a short paragraph, the same
-- for the same record (fixed order, rounded figures), for SQD's repair prompts and for
-- prompts that hand a kernel back with its result. A script that wants other words
-- replaces feedback.text.
--
--   local feedback = require "method.feedback"
--   feedback.text(result)                                   -- a failure: the engine's words
--   feedback.text(result, {roofline = 1131, threads = 16})  -- a success: speed, share, calls
--
-- result: a judged kernel (evaluate.completions) or a pool node ({status, message,
-- gflops, ...}). ctx (optional): roofline (the task's limit on this machine, in the
-- result's unit: wiring.roofline), threads, and max_chars (feedback.max_chars).

local feedback = {}

-- What prompts.repair has always kept of an error.
feedback.max_chars = 2000

feedback.status_words = {
  format_violation = "a format violation", library_violation = "a library violation",
  compile_error = "a compile error", timeout = "a timeout", runtime_error = "a runtime error",
  verification_error = "a wrong result", rejected = "a refused measurement",
}

-- Three significant digits: 0.0123, 1.23, 123, 12300.
local function sig3(x)
  if x == 0 then return "0" end
  local digits = math.max(0, 2 - math.floor(math.log(math.abs(x), 10)))
  return string.format("%." .. digits .. "f", x)
end

local function bounded(text, max)
  if #text <= max then return text end
  return text:sub(1, max - 4) .. "\n..."
end

-- A failure in the engine's own words (the compiler's diagnostics, the first element
-- out of bounds, the fault and where): what a repair needs, and nothing the engine
-- did not say.
local function failure_text(r, max)
  local message = r.message
  if message == nil or message == "" then
    message = "(no message: " .. (feedback.status_words[r.status] or tostring(r.status)) .. ")"
  end
  return bounded(tostring(message), max)
end

-- The counters the record carries, or why it has none.
local function counters_line(r)
  local c = r.counters
  if type(c) ~= "table" then return nil end
  local names = {}
  for k, v in pairs(c) do if type(v) == "number" then names[#names + 1] = k end end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = k .. " " .. sig3(c[k]) end
  local line = #parts > 0 and ("Counters per call: " .. table.concat(parts, ", ") .. ".") or nil
  if r.counters_unavailable then
    line = (line and (line .. " ") or "") .. "Not counted: " .. tostring(r.counters_unavailable) .. "."
  end
  return line
end

-- A kernel that verified: its speed in its task's unit, the share of the machine's
-- roofline, how steady its calls were, what it uses, and the compiler's remarks.
local function success_text(r, ctx, max)
  local unit = r.unit or "GFLOPS"
  local speed = r.speed or r.gflops or 0
  local lines = {}
  local line = "Correct. Speed: " .. sig3(speed) .. " " .. unit
  if ctx.roofline and ctx.roofline > 0 and unit ~= "% of the roofline" then
    line = line .. string.format(", %s%% of this machine's limit of %s %s", sig3(100 * speed / ctx.roofline),
                                 sig3(ctx.roofline), unit)
    if ctx.threads and ctx.threads > 0 then line = line .. " on " .. ctx.threads .. " threads" end
  end
  lines[#lines + 1] = line .. "."
  if type(r.times) == "table" and #r.times > 1 then
    local lo, hi = math.huge, 0
    for _, t in ipairs(r.times) do lo, hi = math.min(lo, t), math.max(hi, t) end
    lines[#lines + 1] = string.format("Timed calls: %d, fastest %s ms, slowest %s ms.", #r.times, sig3(1e3 * lo),
                                      sig3(1e3 * hi))
  end
  if type(r.techniques) == "table" then
    lines[#lines + 1] = "Techniques found: " .. (#r.techniques > 0 and table.concat(r.techniques, ", ") or "none") .. "."
  end
  lines[#lines + 1] = counters_line(r)
  if type(r.remarks) == "string" and r.remarks ~= "" then
    lines[#lines + 1] = "Compiler remarks:\n" .. r.remarks
  end
  return bounded(table.concat(lines, "\n"), max)
end

-- The paragraph for one result.
function feedback.text(r, ctx)
  ctx = ctx or {}
  local max = ctx.max_chars or feedback.max_chars
  if type(r) ~= "table" then error("feedback.text: a result table is required", 2) end
  if r.status == "ok" then return success_text(r, ctx, max) end
  return failure_text(r, max)
end

return feedback
