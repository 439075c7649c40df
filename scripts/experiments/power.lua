-- How many seeds an experiment needs: the power of the paired tests (the 95% t interval,
-- the exact sign test, the exact permutation test) to detect a learning gain, from pilot
-- runs' per-seed gains. The protocol (docs/protocol.md) fixes its seeds with this.
--
--   engine power.lua --values=-8.1,1.8,26.5,7.0,11.4,-5.3       # pilot gains, one per seed
--   engine power.lua runs/experiment1                           # the reward gains of a run directory
--   engine power.lua --values=... --effect=10 --sd=15 --target=0.9
--   engine power.lua --values=... --alpha=0.0167           # one of three claims (Bonferroni)
--
-- The gains are modelled as normal with the pilots' mean and standard deviation (or the
-- --effect and --sd given, e.g. the smallest effect worth detecting), and each n from 2
-- to --max_n is simulated (--trials experiments each, fixed seed: the same table every
-- time). It prints the table and the fewest seeds reaching --target for each test.

local cli = require "core.cli"
local results = require "report.results"
local seed_results = require "report.seed_results"
local stats = require "core.stats"

local M = {}

M.spec = {
  description = "The power of the paired tests over seeds, and the seeds a target power needs.",
  positional = "[RUN_DIR]",
  options = {
    {"values", "", "pilot per-seed gains, comma-separated (instead of RUN_DIR)"},
    {"effect", 0.0, "the gain to detect (0: the pilots' mean)"},
    {"sd", 0.0, "the per-seed deviation of the gain (0: the pilots')", min = 0},
    {"target", 0.8, "the power to reach", above = 0, max = 1},
    {"alpha", 0.05, "the exact tests' level (e.g. 0.05 / 3 for three claims; the t column stays the 95% interval)",
     above = 0, max = 0.5},
    {"max_n", 16, "the most seeds to consider", min = 2, max = 64},
    {"trials", 4000, "simulated experiments per n", min = 100},
    cli.debug_option,
  },
}

-- The pilots' per-seed gains: --values, else every learning configuration's reward gains
-- in the run directory (paired with its lr = 0 runs by seed).
local function pilot_gains(opts)
  if opts.values ~= "" then
    local out = {}
    for item in opts.values:gmatch("[^,%s]+") do
      local v = tonumber(item)
      if not v then cli.fail("--values: '" .. item .. "' is not a number") end
      out[#out + 1] = v
    end
    return out, "--values"
  end
  local dir = opts._[1]
  if not dir then cli.fail("give pilot gains: --values=a,b,... or a run directory") end
  local exp = cli.try(nil, results.load, (dir:gsub("/+$", "")))
  local out = {}
  for _, g in ipairs(seed_results.groups(exp)) do
    local f = seed_results.group_figures(exp, g)
    if f.base then for _, v in pairs(f.values.reward_gain) do out[#out + 1] = v end end
  end
  if #out == 0 then cli.fail(dir .. " has no learning runs paired with lr = 0 runs by seed") end
  return out, dir
end

-- Returns the lines it prints (for tests), and per test the seeds needed (nil: none up to max_n).
function M.run(opts)
  local gains, source = pilot_gains(opts)
  local iv = stats.interval(gains)
  local effect = opts.effect ~= 0 and opts.effect or iv.mean
  local sd = opts.sd > 0 and opts.sd or iv.sd
  local alpha = opts.alpha or 0.05
  if not sd or sd <= 0 then cli.fail("the pilots give no spread: give at least two different gains, or --sd") end
  local lines = {
    string.format("pilots (%s): %d gains, mean %+.2f, sd %.2f, 95%% interval %s; %s", source, #gains, iv.mean,
                  iv.sd or 0, seed_results.pm(iv, "%+.2f"), seed_results.exact_tests_text(gains)),
    string.format("planning: effect %+.2f, sd %.2f (d = %.2f), alpha %.4g two-sided for the exact tests (t: the 95%% "
                  .. "interval), %d simulated experiments per n", effect, sd, effect / sd, alpha, opts.trials),
    "",
    "| seeds | t interval excludes 0 | exact sign test | exact permutation test |",
    "| ---: | ---: | ---: | ---: |",
  }
  local need = {}
  for n = 2, opts.max_n do
    local p = stats.power{effect = effect, sd = sd, n = n, trials = opts.trials, alpha = alpha}
    lines[#lines + 1] = string.format("| %d | %.2f | %.2f | %.2f |", n, p.t, p.sign, p.permutation)
    for _, test in ipairs{"t", "sign", "permutation"} do
      if not need[test] and p[test] >= opts.target then need[test] = n end
    end
  end
  lines[#lines + 1] = ""
  for _, test in ipairs{"t", "sign", "permutation"} do
    lines[#lines + 1] = string.format("power %.2f with the %s test: %s", opts.target, test,
                                      need[test] and (need[test] .. " seeds") or ("more than " .. opts.max_n .. " seeds"))
  end
  return lines, need
end

function M.main(argv)
  local opts = require("engine.args").parse(argv, M.spec)
  local lines = M.run(opts)
  io.stdout:write(table.concat(lines, "\n"), "\n")
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
