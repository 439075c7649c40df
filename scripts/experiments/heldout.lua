-- The learned policies against the base model on the same prompts, timed side by side.
--
-- Each learning run's last checkpoint and the lr = 0 run of its seed (the base model)
-- answer the same prompts, each prompt sampled with the same seed for both, so that their
-- figures differ by what the policy learned alone (an SQD run's own prompts depend on
-- every GFLOPS it measured, so the runs' own rewards mix in where the pools drifted).
--
-- The prompts (--prompts):
--   heldout (the default): what no training step asked, in three labelled parts, each of
--     as many prompts as prompts.fixed gives (one per task where there are more tasks),
--     going round its tasks, without stage rules:
--       sizes     the run's task at a size it never trained on: matmul at --heldout_size,
--                 a task of the suite at its named size "heldout";
--       wordings  the run's task at its training size, in wordings that no training
--                 prompt uses (prompts.reworded);
--       tasks     the suite's held-out tasks (--heldout_tasks; split "heldout"), at their
--                 size "test", in their fixed wordings; none the run trained on.
--   train: the training prompts, one part: Experiment 1's fixed prompts at the training
--     size; SQD's plan the lr = 0 run would expand next over its final pools.
--
-- Timing: for each prompt both policies' G completions are judged in one batch, their
-- kernels taking turns (base 1, learned 1, base 2, ...), so that a drift of the machine's
-- speed falls on both alike. The base model's samples of a seed are drawn once and reused
-- by every learning configuration; their kernels are timed again beside each one's.
--
-- Figures, per policy and part: the mean reward (the run's scheme; in a mixture, as
-- there, on the roofline scale; a kernel of another task earns what a run of that task
-- would give it), the verified share, and the roofline score: each kernel's speed as a
-- percentage of its task's roofline on this machine (the measured FP64 peak of the threads
-- it ran on, or the measured memory bandwidth for a memory-bound task), 0 for a kernel
-- that is not ok, averaged over the kernels. Unlike GFLOPS it compares across machines
-- ("-" where bench.machine() has no measurement). "overall" is the mean of the parts.
-- A figure's gain is learned minus base in each seed; per learning configuration, the
-- gains' mean, 95% t interval and the exact sign and permutation tests over the seeds,
-- overall and per part.
--
-- --out (JSON, rewritten after every seed; complete = true once all are done): the rows,
-- the gains, the machine's rooflines, and per seed and prompt every kernel (the policy
-- that wrote it, its status, speed and unit, roofline score and reward), from which every
-- figure can be recomputed.
--
-- Held out means unseen: before any sampling, the runs' model is audited (audit.lua: its
-- pretraining corpus rebuilt from its pretrain.json and looked through for every item of
-- the held-out split, heldout_split.lua, and for the matmul size asked here). A model whose
-- corpus holds one is refused, the kinds and counts named, unless --allow_contaminated:
-- then the results say "held-out parts seen in pretraining". A model without a recorded
-- corpus is compared, labelled "not proven unseen (corpus unknown)". The label and the
-- audit are in the output and in --out (label, audit).
--
--   engine heldout.lua runs/experiment1 --seeds=1,2,3
--   engine heldout.lua runs/experiment2 --G=16 --out=runs/experiment2/heldout.json
--   engine heldout.lua runs/experiment1 --prompts=train --heldout_tasks=none

local audit = dofile((debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or ".") .. "/audit.lua")
local checks = require "run.checks"
local cli = require "core.cli"
local split = require "method.heldout_split"
local evaluate = require "method.evaluate"
local heldout_figures = require "report.heldout_figures"
local options = require "run.options"
local prompts = require "method.prompts"
local results = require "report.results"
local reward = require "method.reward"
local seed_results = require "report.seed_results"
local sqd = require "method.sqd"
local stages = require "method.stages"
local wiring = require "method.wiring"

local M = {}

M.spec = {
  description = "Samples the same prompts (held out from training, or the training ones) from "
    .. "each run's final policy and from the base model, times both policies' kernels side "
    .. "by side, and compares them seed by seed.",
  positional = "RUN_DIR",
  options = {
    {"G", 0, "completions per prompt (0: the runs' G)", min = 0},
    {"device", "auto", "where the policies run", check = options.check_device},
    {"prompts", "heldout", "which prompts: heldout (other sizes, other wordings, held-out "
     .. "tasks) or train (the runs' training prompts)", choices = {"heldout", "train"}},
    {"heldout_size", 0, "matmul's held-out size M = N = K (0: 1.5 times the runs' --size, "
     .. "rounded to a multiple of 16)", min = 0},
    {"heldout_tasks", "all", "the held-out tasks asked: all (the suite's split heldout), "
     .. "none, or a list 'fft,conv1d'"},
    {"out", "", "also write the figures and every kernel as JSON here, after every seed "
     .. "(complete = true once all are done)"},
    {"allow_contaminated", false, "compare even when the runs' model was pretrained on items of the "
     .. "held-out split (audit.lua finds them); the results are labelled \"held-out parts seen in pretraining\""},
    {"seeds", "", "only these seeds: a list '4,5,6', a range '5-8' ('4-4': seed 4 alone) or a count N (1..N); empty: every seed",
     check = options.check_seeds},
    cli.debug_option,
  },
}

-- The figures of a policy, in the order the tables give them.
M.figures = heldout_figures.figures

-- The parts of the prompts --prompts asks, in the tables' order.
function M.parts(opts)
  if (opts.prompts or "heldout") == "train" then return {"train"} end
  if (opts.heldout_tasks or "all") == "none" then return {"sizes", "wordings"} end
  return {"sizes", "wordings", "tasks"}
end

-- matmul's held-out size: --heldout_size, else 1.5 times the training size rounded to a
-- multiple of 16 (128 -> 192): heldout_split's.
M.heldout_size = split.matmul_heldout_size

-- The held-out tasks --heldout_tasks names: every task of the split "heldout", none, or
-- those listed (each must be one).
function M.heldout_task_names(choice)
  choice = choice or "all"
  if choice == "none" then return {} end
  local names, held = {}, {}
  for _, t in ipairs(split.tasks()) do
    held[t.name] = true
    if choice == "all" then names[#names + 1] = t.name end
  end
  if choice == "all" then return names end
  for name in (choice .. ","):gmatch("%s*([^,]-)%s*,") do
    if name ~= "" then
      if not held[name] then
        cli.fail("--heldout_tasks: '" .. name .. "' is not a held-out task of the suite (held out: "
                 .. table.concat(results.sorted_keys(held), ", ") .. ")")
      end
      names[#names + 1] = name
    end
  end
  if #names == 0 then cli.fail("--heldout_tasks=" .. choice .. ": no task named") end
  return names
end

---------------------------------------------------------------------------------------
-- Rooflines: the runs' rule (wiring.roofline), on the machine that times the kernels now.
---------------------------------------------------------------------------------------

-- What bounds a task's speed on `machine`: wiring.roofline, the rule the runs scale by.
M.roofline_limit = wiring.roofline

-- A judged kernel's roofline score (wiring.roofline_score).
M.roofline_score = wiring.roofline_score

---------------------------------------------------------------------------------------
-- The prompts
---------------------------------------------------------------------------------------

-- The runs' options as the experiment parsed them, for the helpers that take opts.
local function run_opts(cfg, opts)
  local o = {}
  for k, v in pairs(cfg.identity) do o[k] = v end
  o.config, o.experiment = nil, nil
  o.device = opts.device
  if opts.G > 0 then o.G = opts.G end
  return o
end

-- A copy of options o with some replaced.
local function with(o, changes)
  local c = {}
  for k, v in pairs(o) do c[k] = v end
  for k, v in pairs(changes) do c[k] = v end
  return c
end

-- A task as the prompts and the benchmark see it: {name =, task =, bench =, size =}.
local function variant(name, task, bench, size)
  return {name = name, task = task, bench = bench, size = size}
end

-- The run's tasks at their training size: its one task, or each of its mixture's.
local function run_tasks(o, config)
  local out = {}
  for _, name in ipairs(wiring.task_names(o)) do
    if o.task_list then
      out[#out + 1] = variant(name, wiring.task_for(o, config, name), wiring.bench_opts_for(o, config, name),
                              o.task_size ~= "" and o.task_size or "train")
    else
      local size = name == "matmul" and string.format("M = N = K = %d", o.size)
                   or (o.task_size ~= "" and o.task_size or "train")
      out[#out + 1] = variant(name, wiring.task(o, config), wiring.bench_opts(o, config), size)
    end
  end
  return out
end

-- The run's tasks at a size they never trained on: matmul alone at --heldout_size, a task
-- of the suite (or of a mixture) at its named size "heldout". A run that trained at
-- "heldout" has no other size here.
local function other_sizes(o, config, opts)
  local out = {}
  for _, t in ipairs(run_tasks(o, config)) do
    if not o.task_list and t.name == "matmul" then
      local size = M.heldout_size(o.size, opts.heldout_size)
      if size == o.size then cli.fail("--heldout_size=" .. size .. " is the size the runs trained at") end
      local o2 = with(o, {size = size})
      out[#out + 1] = variant("matmul", wiring.task(o2, config), wiring.bench_opts(o2, config),
                              string.format("M = N = K = %d", size))
    elseif t.size == split.size_name then
      log.warn("the run trained at its held-out size: no other size of it is asked", {task = t.name})
    else
      local o2 = with(o, {task_size = split.size_name})
      if o.task_list then
        out[#out + 1] = variant(t.name, wiring.task_for(o2, config, t.name),
                                wiring.bench_opts_for(o2, config, t.name), split.size_name)
      else
        out[#out + 1] = variant(t.name, wiring.task(o2, config), wiring.bench_opts(o2, config), split.size_name)
      end
    end
  end
  return out
end

-- The held-out tasks of --heldout_tasks at their size "test", without the run's own.
local function heldout_tasks(o, config, opts)
  local own = {}
  for _, name in ipairs(wiring.task_names(o)) do own[name] = true end
  local out = {}
  for _, name in ipairs(M.heldout_task_names(opts.heldout_tasks)) do
    if not own[name] then
      local o2 = with(o, {task = name, task_size = "test"})
      out[#out + 1] = variant(name, wiring.task(o2, config), wiring.bench_opts(o2, config), "test")
    end
  end
  return out
end

-- One prompt of the set: its part, its task and benchmark options, its messages, its
-- stage (nil: no stage rules) and its reward context.
local function entry(part, v, messages, stage, ctx)
  return {part = part, name = v.name, task = v.task, bench = v.bench, size = v.size, messages = messages,
          stage = stage, ctx = ctx or {}}
end

-- `count` prompts (at least one per task) going round the tasks `variants`: the j-th is
-- the j-th wording of what build(task) gives for its task.
local function in_turn(part, variants, build, count)
  local out = {}
  if #variants == 0 then return out end
  for j = 1, math.max(count, #variants) do
    local v = variants[(j - 1) % #variants + 1]
    local all = build(v.task)
    out[#out + 1] = entry(part, v, all[(j - 1) % #all + 1])
  end
  return out
end

-- Experiment 1's training prompts: each task's eight fixed ones, the tasks in turn.
local function fixed_prompts(o, config)
  local out, variants = {}, run_tasks(o, config)
  for e = 1, #prompts.task_templates do
    for _, v in ipairs(variants) do
      local all = prompts.fixed(v.task)
      if all[e] then out[#out + 1] = entry("train", v, all[e]) end
    end
  end
  return out
end

-- SQD's training prompts: the plan the lr = 0 run would expand next over its final pools.
local function sqd_prompts(base, o)
  local out, variants = {}, run_tasks(o, base.config)
  local run = store.open(base.dir, {read_only = true})
  for t, v in ipairs(variants) do
    local suffix = o.task_list and ("/" .. v.name) or ""
    local pools, seed = sqd.load_pools(run, "pool" .. suffix, "seed_id" .. suffix)
    local rng = sqd.rng(seed_results.seed_of(base) * 7919 + 1000 + (t - 1) * 1000003)
    local ladder = stages.for_task(v.name ~= "matmul" and v.name or nil)
    for _, pick in ipairs(sqd.plan(pools, seed, {rng = rng, stages = ladder})) do
      out[#out + 1] = entry("train", v, sqd.prompt(pick, v.task), pick.stage,
                            {baseline_gflops = pick.node.gflops or 0})
    end
  end
  run:close()
  return out
end

-- The prompts of a seed, from its lr = 0 run, in the order of the parts.
local function prompt_set(base, o, opts)
  if (opts.prompts or "heldout") == "train" then
    if base.identity.experiment == "experiment2" then return sqd_prompts(base, o) end
    return fixed_prompts(o, base.config)
  end
  local count = #prompts.fixed_templates
  local out = {}
  local parts = {
    in_turn("sizes", other_sizes(o, base.config, opts), prompts.fixed, count),
    in_turn("wordings", run_tasks(o, base.config), split.wordings, count),
    in_turn("tasks", heldout_tasks(o, base.config, opts), prompts.fixed, count),
  }
  for _, part in ipairs(parts) do
    for _, p in ipairs(part) do out[#out + 1] = p end
  end
  return out
end

---------------------------------------------------------------------------------------
-- Sampling and judging
---------------------------------------------------------------------------------------

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

-- The answer's given beginning for a prompt of task p (runs made with --prefill), "" else.
local function answer_start(p, o)
  return o.prefill and prompts.answer_start(p.name) or ""
end

-- A policy's G completions of each prompt, the i-th prompt sampled with seed sample_seed + i.
local function sample_set(pol, set, o, sample_seed)
  local out = {}
  for i, p in ipairs(set) do
    out[i] = pol:sample({prompts.render(p.messages) .. answer_start(p, o)},
                        wiring.sample_opts(o, sample_seed + i))[1]
  end
  return out
end

-- The two policies' completions taking turns (base 1, learned 1, base 2, ...), and who
-- wrote each: {policy =, sample =}.
function M.interleave(base, learned)
  local order, owners = {}, {}
  for k = 1, math.max(#base, #learned) do
    if base[k] then order[#order + 1], owners[#order + 1] = base[k], {policy = "base", sample = k} end
    if learned[k] then order[#order + 1], owners[#order + 1] = learned[k], {policy = "learned", sample = k} end
  end
  return order, owners
end

-- The speed under --reward=kernelcompare: the task's naive seed kernel's on this problem,
-- measured once per problem (SQD's training prompts carry their parent's).
local function reward_ctx(p, o, deps, cache)
  if o.reward ~= "kernelcompare" or p.ctx.baseline_gflops then return p.ctx end
  local key = p.name .. " " .. p.size
  if cache[key] == nil then
    local r = evaluate.completions({prompts.seed(p.task)}, {bench = deps.bench, bench_opts = p.bench,
                                                           task = p.name ~= "matmul" and p.name or nil})[1]
    cache[key] = r.status == "ok" and reward.speed(r) or 0
  end
  return {baseline_gflops = cache[key]}
end

-- Judges one prompt's completions of both policies in one batch, their kernels in turns.
-- Returns its record: the prompt's part, task and size, and per kernel (in the order they
-- were timed) who wrote it, its status, speed, roofline score and reward.
local function judge_prompt(p, base, learned, o, deps, env)
  local order, owners = M.interleave(base, learned)
  local begun = answer_start(p, o)
  if begun ~= "" then
    for j, c in ipairs(order) do order[j] = begun .. c.text end
  end
  local judged = evaluate.completions(order, {
    bench = deps.bench, bench_opts = p.bench, stage = p.stage, task = p.name ~= "matmul" and p.name or nil,
    detector = (o.detector or "") ~= "" and o.detector or nil})
  if env.limits[p.name] == nil then
    env.limits[p.name] = M.roofline_limit(env.machine, p.name, p.bench.threads) or false
  end
  local limit = env.limits[p.name] or nil
  local record = {part = p.part, task = p.name, size = p.size, stage = p.stage, roofline_limit = limit,
                  kernels = {}}
  local groups = {base = {}, learned = {}}
  for j, r in ipairs(judged) do
    local ok = r.status == "ok"
    local k = {policy = owners[j].policy, sample = owners[j].sample, status = r.status,
               speed = ok and reward.speed(r) or nil, unit = ok and (r.unit or "GFLOPS") or nil,
               roofline = M.roofline_score(r, limit)}
    if o.task_list and ok and k.roofline then  -- a mixture rewards on its one scale
      r.speed, r.unit = k.roofline, "% of the roofline"
    end
    record.kernels[j] = k
    local g = groups[k.policy]
    g[#g + 1] = {result = r, kernel = k}
  end
  local ctx = reward_ctx(p, o, deps, env.baselines)
  for _, g in pairs(groups) do  -- each policy's group rewarded on its own, as in a run
    local rs = {}
    for i, x in ipairs(g) do rs[i] = x.result end
    for i, v in ipairs(reward.scheme(o.reward)(rs, ctx)) do g[i].kernel.reward = v end
  end
  return record
end

---------------------------------------------------------------------------------------
-- Figures
---------------------------------------------------------------------------------------

-- The figures: report/heldout_figures.lua, which the results page's claims recompute.
local seed_figures = heldout_figures.seed_figures

-- One learning run against its seed's lr = 0 run: both policies sample the prompts with
-- the same seeds, and each prompt's kernels of both are timed together. The prompts and the
-- base model's samples are kept on `base` (drawn once per seed, whatever number of
-- learning configurations share it). Returns the seed's record.
local function compare_run(cfg, base, opts, deps, env)
  if opts.template == "model" or base.identity.template == "model" then
    cli.fail("runs with --template=model are not supported here")
  end
  if cfg.config.opt ~= base.config.opt then
    cli.fail(cfg.dir .. " and its lr = 0 run " .. base.dir .. " compile at different levels")
  end
  local seed = seed_results.seed_of(cfg)
  local o = run_opts(base, opts)
  local sample_seed = seed * 1000003
  local drawn = base.heldout
  if not drawn then
    drawn = {set = prompt_set(base, o, opts)}
    drawn.samples = sample_set(policy_of(base, o, deps), drawn.set, o, sample_seed)
    base.heldout = drawn
  end
  local set = drawn.set
  local learned = sample_set(policy_of(cfg, run_opts(cfg, opts), deps), set, o, sample_seed)
  local records = {}
  for i, p in ipairs(set) do
    records[i] = judge_prompt(p, drawn.samples[i], learned[i], o, deps, env)
    records[i].sample_seed = sample_seed + i
  end
  local parts, overall = seed_figures(records, M.parts(opts))
  local function fmt(f, k, pattern) return f and f[k] and string.format(pattern, f[k]) or "-" end
  log.info("held out", {seed = seed, config = cfg.name, base = fmt(overall.base, "reward", "%.1f"),
                        learned = fmt(overall.learned, "reward", "%.1f"),
                        base_roofline = fmt(overall.base, "roofline", "%.2f%%"),
                        learned_roofline = fmt(overall.learned, "roofline", "%.2f%%")})
  return {seed = seed, run = cfg.name, baseline = base.name, parts = parts, overall = overall,
          prompts = records}
end

-- "base -> learned" of one figure.
local function pair_text(b, l, k, pattern, scale)
  local function one(f) return f and f[k] and string.format(pattern, (scale or 1) * f[k]) or "-" end
  return one(b) .. " → " .. one(l)
end

-- A table cell: the mean reward, verified share and roofline score, base -> learned.
local function cell(f)
  if not (f and f.base) then return "-" end
  return string.format("%s, %s, %s", pair_text(f.base, f.learned, "reward", "%.1f"),
                       pair_text(f.base, f.learned, "ok", "%.0f%%", 100),
                       pair_text(f.base, f.learned, "roofline", "%.2f%%"))
end

-- The table row of a seed's record.
local function row_of(rec, key, part_names)
  local cells = {tostring(rec.seed), key, tostring(#rec.prompts)}
  for _, name in ipairs(part_names) do cells[#cells + 1] = cell(rec.parts[name]) end
  cells[#cells + 1] = cell(rec.overall)
  local g = rec.overall.gain
  cells[#cells + 1] = g.reward and string.format("%+.1f", g.reward) or "-"
  cells[#cells + 1] = g.roofline and string.format("%+.2f", g.roofline) or "-"
  return "| " .. table.concat(cells, " | ") .. " |"
end

-- The table's header for the parts.
function M.header(part_names)
  local head = {"seed", "configuration", "prompts"}
  local align = {"---:", "---", "---:"}
  for _, name in ipairs(part_names) do head[#head + 1], align[#align + 1] = name, "---:" end
  for _, name in ipairs({"overall", "reward gain", "roofline gain (points)"}) do
    head[#head + 1], align[#align + 1] = name, "---:"
  end
  return {"| " .. table.concat(head, " | ") .. " |", "| " .. table.concat(align, " | ") .. " |"}
end

-- Appends a seed's gains to its configuration's lists: overall, and per part.
local function add_gains(g, rec, part_names)
  local function push(into, gain)
    for _, f in ipairs(M.figures) do
      into[f] = into[f] or {}
      if gain and gain[f] then into[f][#into[f] + 1] = gain[f] end
    end
  end
  g.seeds[#g.seeds + 1] = rec.seed
  push(g, rec.overall.gain)
  for _, name in ipairs(part_names) do
    g.parts[name] = g.parts[name] or {}
    push(g.parts[name], rec.parts[name] and rec.parts[name].gain)
  end
end

-- The comparison of the runs in dir; deps: the primitives (wiring.deps). Returns the
-- table's rows (text), per learning configuration its per-seed gains ({reward =, ok =,
-- roofline =, seeds =, parts = {[part] = {reward =, ok =, roofline =}}}), and the raw data
-- ({machine =, seeds = the seeds' records}). on_row(rows, by_group, raw), when given, sees
-- them after each comparison, so a caller can keep what a stopped call has finished.
-- The labels of a comparison by what the audit of its model found.
M.labels = {clean = "held out: unseen in pretraining (audited)",
            unknown = "not proven unseen: the model's pretraining corpus is unknown",
            overlaps = "held-out parts seen in pretraining"}

-- The audit of the runs' models (audit.model, or deps.audit as a stand-in), each against the
-- split and the matmul size asked here: {label =, status =, models = {audit results}}. A
-- model whose corpus holds held-out items is refused without --allow_contaminated.
function M.audit_runs(exp, opts, deps, audit_fn)
  local dirs, sizes, seen = {}, {}, {}
  for _, s in ipairs(split.matmul_sizes) do seen[s] = true; sizes[#sizes + 1] = s end
  for _, cfg in ipairs(exp.configs) do
    local o = run_opts(cfg, opts)
    local d = wiring.model_dir(o, deps)
    if not seen[d] then seen[d] = true; dirs[#dirs + 1] = d end
    if not o.task_list and (o.task or "matmul") == "matmul" and o.size then
      local s = M.heldout_size(o.size, opts.heldout_size)
      if not seen[s] then seen[s] = true; sizes[#sizes + 1] = s end
    end
  end
  local models, status = {}, "clean"
  for i, d in ipairs(dirs) do
    local r = audit_fn(d, {matmul_sizes = sizes})
    models[i] = r
    if r.status == "overlaps" then
      if not opts.allow_contaminated then
        cli.fail(string.format("%s was pretrained on items of the held-out split (%s; engine audit.lua %s "
                               .. "lists them): a comparison on it is not held out. --allow_contaminated "
                               .. "compares anyway, labelled \"%s\"", d, audit.counts_text(r), d, M.labels.overlaps))
      end
      status = "overlaps"
    elseif r.status == "unknown" and status == "clean" then
      status = "unknown"
    end
  end
  if status == "unknown" then
    log.warn("the runs' model has no recorded pretraining corpus: the comparison is not proven unseen",
             {model = table.concat(dirs, ", ")})
  end
  return {status = status, label = M.labels[status], models = models}
end

function M.compare(dir, opts, deps, on_row)
  local audit_fn = deps and deps.audit or audit.model
  deps = wiring.deps(deps)
  local exp = cli.try(nil, results.load, (dir:gsub("/+$", "")))
  for _, cfg in ipairs(exp.configs) do  -- its prompts and parts are the CPU tasks'
    local task = cfg.identity and cfg.identity.task
    if require("method.cuda_eval").task_name(task) then
      cli.fail(cfg.dir .. " ran on the CUDA task " .. task .. ": heldout.lua compares policies on CPU tasks only")
    end
  end
  local wanted
  if (opts.seeds or "") ~= "" then
    wanted = {}
    for _, s in ipairs(options.parse_seeds(opts.seeds)) do wanted[s] = true end
  end
  M.heldout_task_names(opts.heldout_tasks)  -- a wrong list is refused before any sampling
  local part_names = M.parts(opts)
  local audited = (opts.prompts or "heldout") == "heldout" and M.audit_runs(exp, opts, deps, audit_fn) or nil
  local machine = deps.bench.machine and checks.measuring_machine(deps) or nil
  local env = {machine = machine, limits = {}, baselines = {}}
  local raw = {prompts = opts.prompts or "heldout", parts = part_names, machine = machine, seeds = {},
               audit = audited, label = audited and audited.label}
  local rows, by_group = {}, {}
  for _, group in ipairs(seed_results.groups(exp)) do
    -- the lr = 0 runs of the same swept values (the O3 learner against the O3 baseline)
    local base_group = seed_results.baseline_group(exp, group)
    local bases = {}
    for _, cfg in ipairs(base_group and base_group.runs or {}) do
      bases[seed_results.seed_of(cfg)] = cfg
    end
    for _, cfg in ipairs(group.runs) do
      local seed = seed_results.seed_of(cfg)
      if base_group and (not wanted or wanted[seed]) then
        local base = bases[seed]
        if not base then cli.fail(cfg.dir .. ": no lr = 0 run of seed " .. seed .. " to compare with") end
        local rec = compare_run(cfg, base, opts, deps, env)
        rec.configuration = group.key
        raw.seeds[#raw.seeds + 1] = rec
        by_group[group.key] = by_group[group.key] or {seeds = {}, parts = {}}
        add_gains(by_group[group.key], rec, part_names)
        rows[#rows + 1] = row_of(rec, group.key, part_names)
        if on_row then on_row(rows, by_group, raw) end
      end
    end
  end
  if #rows == 0 then
    cli.fail(dir .. " needs runs with lr = 0 and with lr > 0 of the same seeds")
  end
  return rows, by_group, raw
end

-- One figure's gains over the seeds in words: mean ± half-width, the interval's verdict and
-- the exact tests. `scale` turns shares into points.
local function gain_text(name, values, pattern, scale)
  local scaled = {}
  for i, v in ipairs(values or {}) do scaled[i] = v * (scale or 1) end
  local iv = seed_results.interval(scaled)
  if iv.n == 0 then return name .. " gain: no value" end
  return string.format("%s gain %s (%s; %s)", name, seed_results.pm(iv, pattern),
                       seed_results.verdict(iv, "learned better", "learned worse", "no difference shown"),
                       seed_results.exact_tests_text(scaled))
end

-- The three figures' gains of one scope (overall or a part), in words.
local function scope_text(g)
  return table.concat({gain_text("reward", g.reward, "%+.2f"),
                       gain_text("verified share", g.ok, "%+.1f points", 100),
                       gain_text("roofline score", g.roofline, "%+.2f points")}, "; ")
end

-- One figure's gains as JSON: the per-seed values, their interval and the exact tests.
local function gain_json(values)
  return {values = values, interval = seed_results.interval(values),
          tests = seed_results.exact_tests_text(values)}
end

-- Per learning configuration: its gains, their intervals and tests, and the lines that say
-- them (overall, then per part).
local function summarize(by_group, part_names)
  local summary, lines = {}, {}
  for _, key in ipairs(results.sorted_keys(by_group)) do
    local g = by_group[key]
    lines[#lines + 1] = string.format("- `%s`, %d seeds:", key, #g.seeds)
    lines[#lines + 1] = "  - overall: " .. scope_text(g)
    local s = {seeds = g.seeds, reward = g.reward, ok = g.ok, interval = seed_results.interval(g.reward),
               overall = {}, parts = {}}
    for _, f in ipairs(M.figures) do s.overall[f] = gain_json(g[f]) end
    for _, name in ipairs(part_names) do
      local p = g.parts[name]
      if p and #p.reward > 0 then
        lines[#lines + 1] = "  - " .. name .. ": " .. scope_text(p)
        s.parts[name] = {}
        for _, f in ipairs(M.figures) do s.parts[name][f] = gain_json(p[f]) end
      end
    end
    summary[key] = s
  end
  return summary, lines
end

-- deps: the primitives (nil: the engine's), for callers that stand in for them.
function M.main(argv, deps)
  local opts, dirs = cli.parse_dirs(argv, M.spec, "engine heldout.lua RUN_DIR [--G=N]")
  local part_names = M.parts(opts)
  -- --out is rewritten after every seed (complete = false until the last one).
  local function save(rows, by_group, raw, complete)
    if opts.out == "" then return end
    json.write(opts.out, {prompts = raw.prompts, parts = raw.parts, machine = raw.machine, rows = rows,
                          gains = (summarize(by_group, part_names)), seeds = raw.seeds, complete = complete,
                          label = raw.label, audit = raw.audit})
  end
  local rows, by_group, raw = M.compare(dirs[1], opts, deps, function(r, g, x) save(r, g, x, false) end)
  local out = raw.label and {"Held out: " .. raw.label .. ".", ""} or {}
  for _, l in ipairs(M.header(part_names)) do out[#out + 1] = l end
  for _, r in ipairs(rows) do out[#out + 1] = r end
  out[#out + 1] = ""
  out[#out + 1] = "Each cell: mean reward, verified share, roofline score (lr = 0 → learned); "
    .. "overall is the mean of the parts. " .. wiring.rooflines_text(raw.machine)
  out[#out + 1] = ""
  local _, lines = summarize(by_group, part_names)
  for _, l in ipairs(lines) do out[#out + 1] = l end
  io.stdout:write(table.concat(out, "\n"), "\n")
  save(rows, by_group, raw, true)
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
