-- A short run that exercises the engine's host end to end: options, a sweep over two
-- parameters, the run store (resumable), logging and the progress display.
--
--   engine host_check.lua --steps=20 --out=runs/host-check

local args = require "engine.args"
local progress = require "engine.progress"
local sweep = require "engine.sweep"

local opts = args.parse(arg, {
  description = "Checks that the host works: runs a toy sweep into the run store.",
  options = {
    {"steps", 10, "steps per configuration"},
    {"out", "runs/host-check", "run directory"},
  },
})

local configs = sweep.product{{"rate", {0.5, 2.0}}, {"offset", {0, 10}}}
local run = store.open(opts.out, {config = {steps = opts.steps, configs = configs}})
log.info(run:resumed() and "resuming host check" or "starting host check",
         {dir = run:dir(), configs = #configs})

local bar = progress.new{total = #configs * opts.steps, label = "host check", interval = 1}
local done = 0
for i, config in ipairs(configs) do
  local id = sweep.name(config)
  local last = run:get("last_step/" .. id, 0)
  done = done + last
  for step = last + 1, opts.steps do
    run:atomic(function()
      local value = config.offset + config.rate * step
      run:add_sample{iteration = step, status = "ok", reward = value, config_id = id,
                     prompt = "toy", completion = tostring(value)}
      run:log{config = id, step = step, value = value}
      run:set("last_step/" .. id, step)
    end)
    done = done + 1
    bar:update(done, {config = i})
  end
end
bar:finish()

local best = run:samples{order_by = "reward", descending = true, limit = 1}[1]
log.info("host check done", {samples = run:count(), best = best.reward, best_config = best.config_id})
print(string.format("host check: %d samples in %s, best reward %.1f (%s)",
                    run:count(), run:dir(), best.reward, best.config_id))
