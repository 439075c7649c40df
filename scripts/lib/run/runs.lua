-- A sweep's runs: one run directory per configuration (and seed), named by it and holding
-- its identity, the options that change what is computed. A run is opened only where that
-- is safe (every directory of the sweep is checked before any is made; an existing run
-- only with --resume and its own options; never one another engine has open), built into
-- a session (session.lua), closed with a summary, and its work items are moved through
-- the pipeline (runs.pipeline).
--
--   runs.entry_points(M, "experiment1", run_steps, "steps")  -- M.run(opts, deps), M.main(argv)
--   -- run_steps(run, session, name, opts) runs one configuration, returns its counters

local checks = require "run.checks"
local cli = require "core.cli"
local options = require "run.options"
local prompts = require "method.prompts"
local session = require "run.session"
local stages = require "method.stages"
local sweep = require "engine.sweep"
local wiring = require "method.wiring"

local runs = {}

-- The options that say where/how to run, not what is run: left out of a run's identity,
-- so a run can be resumed or extended with different values.
runs.runtime_options = {out = true, configs = true, resume = true, profile = true,
                        device = true, steps = true, iterations = true, _ = true,
                        _given = true, checkpoint_every = true, debug = true,
                        seeds = true, seed_list = true, mixed_nodes = true,
                        worker_timeout = true, cuda_child = true}

-- Options added after runs were made, with the value those runs computed with: a run
-- stored without one of them resumes when the option keeps that value.
runs.introduced = {update_groups = 1, scale_rewards = "group", async = 0, prefill = false}

-- The runs of a sweep: each configuration once per seed of opts.seed_list. With several
-- seeds each run's configuration holds its seed (its directory name ends in ',seed=S');
-- with one it does not, and the seed stays an option of the run (as it always was).
-- Seeds are the outer loop: every configuration's first seed runs before any second.
function runs.with_seeds(configs, opts)
  local seeds = opts.seed_list or {opts.seed}
  if #seeds <= 1 then return configs end
  local out = {}
  for _, seed in ipairs(seeds) do
    for _, config in ipairs(configs) do
      local copy = {seed = seed}
      for k, v in pairs(config) do copy[k] = v end
      out[#out + 1] = copy
    end
  end
  return out
end

-- The configurations a sweep runs: the product of its axes ({{"opt", opts.opt}, ...}, in
-- the order of engine.sweep), those --configs selects, each once per seed of --seeds.
function runs.configs(opts, axes)
  local ok, selected = pcall(sweep.select, sweep.product(axes), opts.configs)
  if not ok then cli.fail("--configs: " .. tostring(selected)) end
  return runs.with_seeds(selected, opts)
end

-- The options one run of a configuration uses: its own seed when the configuration has one.
function runs.run_opts(opts, config)
  if config.seed == nil or config.seed == opts.seed then return opts end
  local copy = {}
  for k, v in pairs(opts) do copy[k] = v end
  copy.seed = config.seed
  return copy
end

-- A run's identity: every option that changes what is computed, plus the configuration.
function runs.identity(experiment_name, opts, config)
  local id = {experiment = experiment_name, config = config}
  for k, v in pairs(opts) do
    if not runs.runtime_options[k] and config[k] == nil then id[k] = v end
  end
  return id
end

-- The identity to check against a stored one: without the introduced options the stored
-- run predates and this one leaves at their old value.
function runs.as_stored(identity, stored)
  local out = {}
  for k, v in pairs(identity) do
    if not (stored[k] == nil and runs.introduced[k] == v) then out[k] = v end
  end
  return out
end

local function refuse_existing(dir)
  cli.fail(string.format("%s already holds a run: pass --resume to continue it, or "
                         .. "choose another --out", dir))
end

-- Opens the run directory of one configuration. Refuses to write into an existing run
-- unless --resume is given; with --resume a missing run simply starts. A run another
-- engine has open, or one made with other options, is refused with what to do.
function runs.open_run(dir, identity, opts)
  local exists = sys.exists(dir .. "/config.json")
  if exists and not opts.resume then refuse_existing(dir) end
  if exists then identity = runs.as_stored(identity, json.read(dir .. "/config.json")) end
  local ok, run = pcall(store.open, dir, {config = identity})
  if not ok then
    local message = tostring(run):gsub("\n.*", "")
    local differs = message:match("different configuration %(differs in: ([^)]*)%)")
    if differs then
      cli.fail(string.format("%s holds a run made with other options (they differ in: "
                             .. "%s): --resume continues a run only with the options it "
                             .. "was started with; pass those, or choose another --out",
                             dir, differs))
    end
    cli.fail((message:gsub("^run store: ", "")))
  end
  log.info(exists and "resuming" or "starting", {dir = dir})
  return run
end

-- An SFT run's trainer (pretrain.lua, kernelcompare.lua's SFT phase) picked up where its
-- run stopped: loaded from the run's last checkpoint, if it has one, and `message` logged
-- with the step. `dir` names the run in the error when the checkpoint cannot be loaded.
-- Returns the steps already done (0 for a run that starts).
function runs.resume_trainer(run, trainer, dir, message)
  local done = run:get("step", 0)
  if done > 0 then
    local saved = run:checkpoint_path(run:get("checkpoint"))
    cli.try(string.format("cannot resume %s from its checkpoint %s", dir, saved), trainer.load, trainer, saved)
    done = trainer:steps()
    log.info(message, {step = done})
  end
  return done
end

-- Inside run:atomic: the trainer's state saved as checkpoint "step-STEP", and the run's
-- resume point (runs.resume_trainer's) moved to it.
function runs.save_trainer(run, trainer, step)
  local name = "step-" .. step
  trainer:save(run:begin_checkpoint(name))
  run:commit_checkpoint(name)
  run:set("checkpoint", name)
  run:set("step", step)
end

-- --out holding another experiment's runs: report.lua could not tell them apart (it refuses
-- such a directory). experiment_name: this experiment's, as its runs' config.json record it.
function runs.check_out(out, experiment_name)
  if not (experiment_name and out and sys.exists(out)) then return end
  local entries = sys.listdir(out)
  table.sort(entries)
  for _, entry in ipairs(entries) do
    local ok, config = pcall(json.read, out .. "/" .. entry .. "/config.json")
    if ok and type(config) == "table" and config.experiment and config.experiment ~= experiment_name then
      cli.fail(string.format("--out=%s holds runs of %s (%s): %s's runs need a directory "
                             .. "of their own; choose another --out", out,
                             tostring(config.experiment), entry, experiment_name))
    end
  end
end

-- Checks what a sweep needs before anything is made: --out holds no other experiment's
-- runs, the model is there, the device exists, sampling fits in memory, and no run
-- directory of the selected configurations is in the way (an existing run without
-- --resume, or a run another engine has open). dirs: the run directories, one per
-- configuration.
function runs.prepare(opts, dirs, deps, experiment_name)
  runs.check_out(opts.out, experiment_name)
  local model = wiring.model_dir(opts, deps)
  local device = wiring.device(opts.device, deps.policy)
  if not deps.injected then checks.check_memory(opts, model, device) end
  for _, dir in ipairs(dirs) do
    if sys.exists(dir .. "/config.json") and not opts.resume then refuse_existing(dir) end
    local pid = store.holder and store.holder(dir)
    if pid then
      cli.fail(string.format("%s is in use by another engine (%s): wait for it to "
                             .. "finish or stop it; one engine at a time may write a run",
                             dir, pid > 0 and ("pid " .. pid) or "its pid is not known"))
    end
  end
end

-- Closes a configuration's run and returns its summary: its name, config, directory and
-- best kernel, with the experiment's own counters (`counters`, e.g. {steps = 20}).
function runs.close_run(run, name, config, counters)
  local best = run:samples{status = "ok", order_by = "gflops", descending = true, limit = 1}[1]
  local summary = {name = name, config = config, best_gflops = best and best.gflops,
                   best_id = best and best.id, dir = run:dir()}
  for k, v in pairs(counters) do summary[k] = v end
  run:close()
  return summary
end

-- One configuration's run: its options (its own seed under --seeds), the policy loaded
-- before the run directory is made (a model that fails leaves none), the run opened or
-- resumed, and its session. body(run, session, name, opts) runs it and returns its
-- counters; the run is closed however body ends. Returns the run's summary (close_run).
function runs.with_run(experiment_name, opts, config, deps, body)
  local name = sweep.name(config)
  opts = runs.run_opts(opts, config)
  local pol = wiring.load_policy(opts, deps)
  local run <close> = runs.open_run(opts.out .. "/" .. name,
                                    runs.identity(experiment_name, opts, config), opts)
  local counters = body(run, session.new(run, opts, config, deps, pol), name, opts)
  return runs.close_run(run, name, config, counters)
end

-- Runs every configuration of a sweep in turn with body (runs.with_run): the vector ISA
-- the prompts name made concrete first (--isa=auto: the benchmark machine's, so each
-- run's config.json records the one it used), and every run directory checked before any
-- is made. experiment_name: the experiment's ("experiment1"), as its runs record it.
-- Returns the runs' summaries.
function runs.run_sweep(experiment_name, opts, configs, deps, body)
  deps = wiring.deps(deps)
  checks.check_async(opts, deps)
  checks.check_cuda_task(opts, deps)
  opts.isa = prompts.isa(opts.isa, deps.bench)
  log.info("vector ISA", {isa = opts.isa, name = stages.isa(opts.isa).name})
  local dirs = {}
  for i, config in ipairs(configs) do dirs[i] = opts.out .. "/" .. sweep.name(config) end
  runs.prepare(opts, dirs, deps, experiment_name)
  local summaries = {}
  for i, config in ipairs(configs) do
    log.info("configuration", {index = i, name = sweep.name(config)})
    summaries[i] = runs.with_run(experiment_name, opts, config, deps, body)
  end
  return summaries
end

-- An experiment script's entry points, for its M.configs(opts) and body (runs.with_run):
-- M.run(opts, deps) runs every selected configuration (deps: the primitives, wiring.lua)
-- and returns their summaries; M.main(argv) parses the command line (M.spec), runs, and
-- prints a line per run with its `counter` ("steps").
function runs.entry_points(M, experiment_name, body, counter)
  function M.run(opts, deps)
    return runs.run_sweep(experiment_name, opts, M.configs(opts), deps, body)
  end
  function M.main(argv)
    local opts = options.parse(argv, M.spec)
    runs.print_runs(M.run(opts), counter, opts.out)
  end
  return M
end

-- What `engine experimentN.lua` prints at its end: a line per run (its `counter`, e.g.
-- "steps") and the report command.
function runs.print_runs(summaries, counter, out)
  for _, r in ipairs(summaries) do
    print(string.format("%-32s %4d %-10s best %s GFLOPS  %s", r.name, r[counter], counter,
                        r.best_gflops and string.format("%.2f", r.best_gflops) or "-", r.dir))
  end
  print("report: engine report.lua " .. out)
end

-- Runs work items first..last (steps; SQD groups) through four phases:
--   sample(i) -> item   the policy's completions
--   start(item)         their evaluation begins (in the background with async)
--   collect(item)       waits for the evaluation, rewards
--   settle(item)        the update and the commit
-- In order without async. With async, item i+1 is sampled while item i is evaluated, and
-- evaluated while item i is trained on and committed, so the sampler and the trainer
-- wait only for the benchmark; the policy that samples item i+1 is then one update behind
-- the one that trains on it.
function runs.pipeline(first, last, async, phases)
  if first > last then return end
  local item = phases.sample(first)
  phases.start(item)
  for i = first, last do
    local next_item
    if async and i < last then next_item = phases.sample(i + 1) end  -- overlaps item i's evaluation
    phases.collect(item)
    if next_item then phases.start(next_item) end                  -- overlaps item i's update
    phases.settle(item)
    if not async and i < last then
      next_item = phases.sample(i + 1)
      phases.start(next_item)
    end
    item = next_item
  end
end

return runs
