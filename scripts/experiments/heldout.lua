-- The learned policies against the baseline on one fixed set of prompts.
--
-- An SQD run's later prompts depend on every GFLOPS it measured, so a learning run and its
-- lr = 0 run end up asking different questions, and their rewards mix what the policy
-- learned with where the pools drifted. This script asks both policies the same prompts:
-- for each seed, the prompts the lr = 0 run would expand next (SQD's plan over its final
-- pools; Experiment 1: the fixed prompts), sampled with the same seed from the base
-- model (lr = 0) and from each learning run's last checkpoint, judged and rewarded as in
-- the run. Each learning configuration's gain is the per-seed difference of mean reward
-- (and of the verified share), with its 95% interval over the seeds.
--
--   engine heldout.lua runs/experiment2                # every seed of the directory
--   engine heldout.lua runs/experiment2 --G=16 --out=runs/experiment2/heldout.json

local cli = require "cli"
local evaluate = require "evaluate"
local options = require "options"
local prompts = require "prompts"
local results = require "results"
local reward = require "reward"
local sqd = require "sqd"
local wiring = require "wiring"

local M = {}

M.spec = {
  description = "Samples one fixed set of prompts from each run's final policy and from the "
    .. "base model, and compares their rewards seed by seed.",
  positional = "RUN_DIR",
  options = {
    {"G", 0, "completions per prompt (0: the runs' G)", min = 0},
    {"device", "auto", "where the policies run", check = options.check_device},
    {"out", "", "also write the figures as JSON here, after every seed (complete = true once all are done)"},
    {"seeds", "", "only these seeds: a list '4,5,6' or a count N (1..N); empty: every seed",
     check = options.check_seeds},
    cli.debug_option,
  },
}

-- The runs' options as the experiment parsed them, for the helpers that take opts.
local function run_opts(cfg, opts)
  local o = {}
  for k, v in pairs(cfg.identity) do o[k] = v end
  o.config, o.experiment = nil, nil
  o.device = opts.device
  if opts.G > 0 then o.G = opts.G end
  return o
end

-- The prompts of a seed: {messages =, stage =, ctx =} each, from its lr = 0 run.
local function prompt_set(base, o)
  local task = wiring.task(o, base.config)
  if base.identity.experiment ~= "experiment2" then
    local out = {}
    for i, msgs in ipairs(prompts.fixed(task)) do out[i] = {messages = msgs, ctx = {}} end
    return out
  end
  local run = store.open(base.dir, {read_only = true})
  local pools, seed = sqd.load_pools(run)
  run:close()
  local out = {}
  for i, pick in ipairs(sqd.plan(pools, seed, {rng = sqd.rng(results.seed_of(base) * 7919 + 1000)})) do
    out[i] = {messages = sqd.prompt(pick, task), stage = pick.stage,
              ctx = {baseline_gflops = pick.node.gflops or 0}}
  end
  return out
end

-- The policy of a run: the base model for lr = 0, else restored from its last checkpoint.
local function policy_of(cfg, o, deps)
  local pol = wiring.load_policy(o, deps)
  if (cfg.config.lr or 0) == 0 then return pol end
  local run = store.open(cfg.dir, {read_only = true})
  local name = run:get("checkpoint")
  local path = name and run:checkpoint_path(name)
  run:close()
  if not path then cli.fail(cfg.dir .. " has no checkpoint to restore its policy from") end
  local trainer = deps.train.grpo(pol, wiring.train_opts(o, cfg.config))
  cli.try("cannot restore " .. cfg.dir .. " from " .. path, trainer.load, trainer, path)
  return pol
end

-- Mean reward and verified share of one policy over the prompt set.
local function score(pol, set, o, config, sample_seed, deps)
  if o.template == "model" then cli.fail("runs with --template=model are not supported here") end
  local b = wiring.bench_opts(o, config)
  local sum, n, ok = 0, 0, 0
  for i, p in ipairs(set) do
    local text = prompts.render(p.messages)
    local completions = pol:sample({text}, wiring.sample_opts(o, sample_seed + i))[1]
    local judged = evaluate.completions(completions, {bench = deps.bench, bench_opts = b, stage = p.stage})
    for _, r in ipairs(reward.scheme(o.reward)(judged, p.ctx)) do sum, n = sum + r, n + 1 end
    for _, r in ipairs(judged) do ok = ok + (r.status == "ok" and 1 or 0) end
  end
  return {reward = sum / n, ok = ok / n, kernels = n}
end

-- One learning run against its seed's lr = 0 run on the lr = 0 run's prompts, both sampled
-- with one seed. The base model's score is kept on `base` (one per seed, however many
-- learning configurations share it). Returns the learned score and the prompts' count.
local function compare_run(cfg, base, opts, deps)
  local seed = results.seed_of(cfg)
  local o = run_opts(base, opts)
  local set = prompt_set(base, o)
  local sample_seed = seed * 1000003
  base.score = base.score or score(policy_of(base, o, deps), set, o, base.config, sample_seed, deps)
  local learned = score(policy_of(cfg, run_opts(cfg, opts), deps), set, o, cfg.config, sample_seed, deps)
  log.info("held out", {seed = seed, config = cfg.name, base = string.format("%.1f", base.score.reward),
                        learned = string.format("%.1f", learned.reward),
                        base_verified = string.format("%.3f", base.score.ok),
                        learned_verified = string.format("%.3f", learned.ok)})
  return learned, #set
end

-- The comparison of the runs in dir; deps: the primitives (wiring.deps). Returns the
-- table's rows (text) and per learning configuration its per-seed gains. on_row(rows,
-- by_group), when given, sees them after each comparison, so a caller can keep what a
-- stopped call has finished.
function M.compare(dir, opts, deps, on_row)
  deps = wiring.deps(deps)
  local exp = cli.try(nil, results.load, (dir:gsub("/+$", "")))
  local wanted
  if (opts.seeds or "") ~= "" then
    wanted = {}
    for _, s in ipairs(options.parse_seeds(opts.seeds)) do wanted[s] = true end
  end
  local rows, by_group = {}, {}
  for _, group in ipairs(results.groups(exp)) do
    -- the lr = 0 runs of the same swept values (the O3 learner against the O3 baseline)
    local base_group = results.baseline_group(exp, group)
    local bases = {}
    for _, cfg in ipairs(base_group and base_group.runs or {}) do bases[results.seed_of(cfg)] = cfg end
    for _, cfg in ipairs(group.runs) do
      local seed = results.seed_of(cfg)
      if base_group and (not wanted or wanted[seed]) then
        local base = bases[seed]
        if not base then cli.fail(cfg.dir .. ": no lr = 0 run of seed " .. seed .. " to compare with") end
        local learned, prompts_asked = compare_run(cfg, base, opts, deps)
        local g = by_group[group.key] or {reward = {}, ok = {}}
        by_group[group.key] = g
        g.reward[#g.reward + 1] = learned.reward - base.score.reward
        g.ok[#g.ok + 1] = learned.ok - base.score.ok
        rows[#rows + 1] = string.format("| %d | %s | %d | %.1f, %.0f%% | %.1f, %.0f%% | %+.1f |", seed, group.key,
                                        prompts_asked, base.score.reward, 100 * base.score.ok, learned.reward,
                                        100 * learned.ok, learned.reward - base.score.reward)
        if on_row then on_row(rows, by_group) end
      end
    end
  end
  if #rows == 0 then
    cli.fail(dir .. " needs runs with lr = 0 and with lr > 0 of the same seeds")
  end
  return rows, by_group
end

-- Per learning configuration: its gains, their intervals, and the line that says them.
local function summarize(by_group)
  local summary, lines = {}, {}
  for key, g in pairs(by_group) do
    local iv, ok_iv = results.interval(g.reward), results.interval(g.ok)
    lines[#lines + 1] = string.format("- `%s`: reward gain %s over %d seeds, %s; verified share %+.1f points",
                                      key, results.pm(iv, "%+.2f"), iv.n,
                                      results.verdict(iv, "better than lr = 0 beyond seed noise",
                                                      "worse than lr = 0 beyond seed noise",
                                                      "not distinguishable from lr = 0"),
                                      100 * ok_iv.mean)
    summary[key] = {reward = g.reward, ok = g.ok, interval = iv}
  end
  return summary, lines
end

function M.main(argv)
  local opts, dirs = cli.parse_dirs(argv, M.spec, "engine heldout.lua RUN_DIR [--G=N]")
  -- --out is rewritten after every seed (complete = false until the last one).
  local function save(rows, by_group, complete)
    if opts.out == "" then return end
    json.write(opts.out, {rows = rows, gains = (summarize(by_group)), complete = complete})
  end
  local rows, by_group = M.compare(dirs[1], opts, nil, function(r, g) save(r, g, false) end)
  local out = {"| seed | configuration | prompts | lr = 0: mean reward, verified | learned | gain |",
               "| ---: | --- | ---: | ---: | ---: | ---: |"}
  for _, r in ipairs(rows) do out[#out + 1] = r end
  out[#out + 1] = ""
  local _, lines = summarize(by_group)
  for _, l in ipairs(lines) do out[#out + 1] = l end
  io.stdout:write(table.concat(out, "\n"), "\n")
  save(rows, by_group, true)
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
