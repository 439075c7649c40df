-- A work item's figures (a step; an SQD group or iteration): the summary of its judged
-- kernels that metrics.jsonl records, and the progress bar and log line that show it
-- while a run goes on.

local progress = require "engine.progress"
local reward = require "method.reward"

local metrics = {}

-- Summary of judged kernels: mean reward, max GFLOPS, counts per status. The max is the
-- best kernel's confirmed figure when it was re-measured (Session:confirm_best);
-- max_gflops_measured is its first measurement.
function metrics.summary(judged)
  local sum, n, top = 0, 0, nil
  local counts = {}
  for _, r in ipairs(judged) do
    sum, n = sum + r.reward, n + 1
    counts[r.status] = (counts[r.status] or 0) + 1
    if r.status == "ok" and (top == nil or r.gflops > top.gflops) then top = r end
  end
  local confirmed = top and (top.confirmed_gflops or (top.extra and top.extra.confirmed_gflops))
  local out = {mean_reward = n > 0 and sum / n or 0, max_gflops = top and (confirmed or top.gflops),
               max_gflops_measured = top and top.gflops, kernels = n, counts = counts}
  -- a CUDA task's best against libtorch's op, at its confirmed speed
  if top and top.vs_yardstick then out.max_vs_yardstick = top.vs_yardstick * out.max_gflops / top.gflops end
  return out
end

-- A progress display whose figures are the step's summary.
function metrics.progress(total, label)
  return progress.new{total = total, label = label, interval = 5}
end

-- Logs a work item's record (a summary with its seconds) and moves the bar to `done`.
function metrics.show(bar, done, record)
  local c = record.counts
  local fields = {step = record.step, reward = string.format("%.2f", record.mean_reward),
                  max_gflops = record.max_gflops and string.format("%.2f", record.max_gflops) or "-",
                  kl = record.kl or "-", statuses = metrics.counts_text(c),
                  x_libtorch = record.max_vs_yardstick and string.format("%.3f", record.max_vs_yardstick) or nil,
                  -- the update's completion tokens: a log alone then gives each phase per token
                  tokens = record.train and record.train.tokens or nil,
                  seconds = string.format("sample %.2f evaluate %.2f update %.2f",
                                          record.seconds.sample, record.seconds.evaluate,
                                          record.seconds.update)}
  if bar.tty then bar.stream:write("\r\27[K") end  -- the log line replaces the bar's
  log.info(record.label or "step", fields)
  bar:update(done, {reward = record.mean_reward, gflops = record.max_gflops or 0,
                    ok = c.ok or 0, kl = record.kl or 0})
end

-- Counts per status as "status=n" text, in the order of Eq. 3, for logs.
function metrics.counts_text(counts)
  local parts = {}
  for _, status in ipairs(reward.statuses) do
    if counts[status] then parts[#parts + 1] = status .. "=" .. counts[status] end
  end
  return table.concat(parts, " ")
end

return metrics
