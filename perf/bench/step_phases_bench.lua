-- A learning run's step, phase by phase, on two machines: reads the metrics of the runs
-- in two run directories (a sweep each, as experiment1.lua writes them) and prints, for
-- the runs with learning, each phase's median seconds a step and a completion token
-- (sampling, evaluation, update, the whole step) and the ratio of the second directory to
-- the first. The runs were measured where they ran; this only reads them back, so two
-- machines are compared on the same job without being in one place.
--
--   build/engine perf/bench/step_phases_bench.lua data/confirmatory/e1 data/confirmatory/e1v5
--   build/engine perf/bench/step_phases_bench.lua runs/a runs/b --config=lr=0.0003
local args = require "engine.args"
local cli = require "core.cli"
local stats = require "core.stats"

local opts = args.parse(arg, {
  description = "Compares two run directories' learning steps phase by phase (seconds a step and "
    .. "a completion token, medians) and prints the second's ratio to the first.",
  positional = "FIRST SECOND (the baseline's run directory, then the compared one's)",
  options = {
    {"config", "lr=0.0003", "runs whose configuration name holds this text"},
  },
})

if #opts._ ~= 2 then cli.fail("give two run directories, the baseline's first (--help)") end
opts.first, opts.second = opts._[1], opts._[2]

local PHASES = {"sample", "evaluate", "update", "wall"}

-- Every step record of the matching runs: {phase = seconds ..., tokens = completion tokens}.
local function steps_of(dir)
  local out = {}
  local runs_dir = sys.exists(dir .. "/runs") and dir .. "/runs" or dir
  for _, name in ipairs(sys.listdir(runs_dir)) do
    local path = runs_dir .. "/" .. name .. "/metrics.jsonl"
    if name:find(opts.config, 1, true) and sys.exists(path) then
      for line in io.lines(path) do
        local ok, r = pcall(json.decode, line)
        if ok and type(r) == "table" and r.kind == "step" and r.seconds and r.train and (r.train.tokens or 0) > 0 then
          local s = {tokens = r.train.tokens}
          for _, p in ipairs(PHASES) do s[p] = r.seconds[p] end
          out[#out + 1] = s
        end
      end
    end
  end
  if #out == 0 then cli.fail(string.format("%s: no step of a run named like '%s' with tokens", dir, opts.config)) end
  return out
end

local function median_of(list, f)
  local xs = {}
  for i, s in ipairs(list) do xs[i] = f(s) end
  return stats.median(xs)
end

local a, b = steps_of(opts.first), steps_of(opts.second)
print(string.format("%s: %d steps, %s: %d steps (runs named like '%s')", opts.first, #a, opts.second, #b,
                    opts.config))
print("| phase | first, s a step | second, s a step | first, ms a token | second, ms a token | second / first (a token) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for _, p in ipairs(PHASES) do
  local sa, sb = median_of(a, function(s) return s[p] end), median_of(b, function(s) return s[p] end)
  local ta = median_of(a, function(s) return 1000 * s[p] / s.tokens end)
  local tb = median_of(b, function(s) return 1000 * s[p] / s.tokens end)
  print(string.format("| %s | %.2f | %.2f | %.3f | %.3f | %.2f |", p, sa, sb, ta, tb, tb / ta))
end
print(string.format("completion tokens a step: %.0f and %.0f (medians)", median_of(a, function(s) return s.tokens end),
                    median_of(b, function(s) return s.tokens end)))
