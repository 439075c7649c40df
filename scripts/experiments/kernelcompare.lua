-- KernelCompare's recipe as one resumable pipeline: supervised fine-tuning on slow -> fast
-- kernel rewrites, then single-turn GRPO with the 0.4/0.4/0.2 reward (reward.kernelcompare:
-- compiles, correct, faster than the naive kernel), and four policies compared on held-out
-- prompts: the base model, SFT only, GRPO only, SFT then GRPO.
--
-- Phases (--phases; each writes into --out and skips itself when its output is complete,
-- so the same command after a kill continues where it stopped):
--   pairs    kernels of every technique set of the task from kernelgen, judged on this
--            machine as experiment 1 judges (evaluate.lua, wiring.bench_opts), and the
--            verified samples of earlier runs (--from); a slower kernel paired with one at
--            least --min_speedup times faster. Each pair is an SFT example in experiment 3's
--            later-turn format: prompts.refine(slow kernel, its feedback.text) -> the fast
--            kernel in a ```c block. OUT/pairs.jsonl, and OUT/pairs.json (the summary,
--            written last: the phase's mark of completion).
--   sft      train.sft on the pairs (a full fine-tune unless --sft_lora_r), checkpointed in
--            OUT/sft every --sft_save_every steps, exported to OUT/sft_model (Hugging Face
--            format, with sft.json written last).
--   grpo     experiment 1 with --reward=kernelcompare, lr = 0 and lr > 0 (--lr) over
--            --seeds: from the base model into OUT/grpo, from OUT/sft_model into
--            OUT/sft_grpo (each run resumes at its last committed step).
--   heldout  heldout.lua on each sweep, with the same held-out prompts and sampling seeds:
--            OUT/heldout_grpo.json (base against GRPO only) and OUT/heldout_sft_grpo.json
--            (SFT only against SFT then GRPO).
--   report   always, from what exists: OUT/report.md.
--
--   engine kernelcompare.lua                          # the default small model, every phase
--   engine kernelcompare.lua --from=runs/experiment1  # earlier runs' verified kernels too
--   engine kernelcompare.lua --phases=pairs,sft       # some phases (the report is always written)
--   engine kernelcompare.lua --model=DIR --profile=full
--
-- An output made with other options is refused, naming them: choose another --out.

local batches = require "method.batches"
local checks = require "run.checks"
local cli = require "core.cli"
local options = require "run.options"
local outputs = require "core.outputs"
local kc_pairs = require "kernelcompare_pairs"
local prompts = require "method.prompts"
local kc_report = require "report.kernelcompare_report"
local runs = require "run.runs"
local sweep = require "engine.sweep"
local wiring = require "method.wiring"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or engine.scripts[1]
local exp1 = dofile(here .. "/experiment1.lua")
local heldout = dofile(here .. "/heldout.lua")

local M = {}

M.phases = {"pairs", "sft", "grpo", "heldout", "report"}

-- Kernels judged per batch in the pairs phase: each batch's results are kept on disk
-- before the next starts, so a killed phase re-measures at most one batch.
M.chunk = 64

-- The pipeline's sweeps: experiment 1 from each starting model.
M.sweeps = {{name = "grpo", heldout = "heldout_grpo.json"}, {name = "sft_grpo", heldout = "heldout_sft_grpo.json"}}

-- --lr: the recipe compares learning with the lr = 0 run of each seed.
local function check_lrs(o)
  local zero, learns = false, false
  for _, lr in ipairs(o.lr or {}) do
    if lr == 0 then zero = true else learns = true end
  end
  if not (zero and learns) then
    return "--lr must hold 0 and at least one value above 0 (the held-out comparison sets "
      .. "each learning run against the lr = 0 run of its seed), got '" .. table.concat(o.lr or {}, ",") .. "'"
  end
end

M.spec = options.spec{
  description = "KernelCompare's recipe: SFT on slow -> fast kernel pairs, then single-turn "
    .. "GRPO with the 0.4/0.4/0.2 reward; the base model, SFT only, GRPO only and SFT then "
    .. "GRPO compared on held-out prompts. Resumable phase by phase.",
  options = {
    {"out", "runs/kernelcompare", "directory of every phase's output"},
    {"phases", {"pairs", "sft", "grpo", "heldout"}, "the phases to run, in this order "
     .. "(report.md is written whatever is chosen)", choices = M.phases},
    {"resume", false, "not needed: every phase continues what it finds in --out"},
    -- pairs
    {"kernels", 1024, "kernelgen kernels generated and judged for the pairs, going round the "
     .. "task's technique sets", min = 0},
    {"from", "", "also pair the verified samples of earlier runs: run directories or sweeps "
     .. "'DIR,DIR' (those of the same task and size)"},
    {"pairs", 512, "the most slow -> fast pairs kept", min = 1},
    {"min_speedup", 1.2, "a pair's fast kernel is at least this many times faster than its "
     .. "slow one", min = 1},
    -- sft
    {"sft_steps", 200, "SFT steps", min = 1},
    {"sft_lr", 1e-4, "SFT learning rate (constant)", above = 0},
    {"sft_batch", 16, "pairs per SFT step", min = 1},
    {"sft_micro_batch", 0, "pairs per forward/backward pass (0: the trainer's default)", min = 0},
    {"sft_lora_r", 0, "LoRA rank of the SFT (0: full fine-tuning; --lora_alpha and "
     .. "--lora_dropout apply)", min = 0},
    {"sft_max_len", 0, "longest pair in tokens, prompt and kernel (0: the model's "
     .. "max_position_embeddings); longer ones are left out", min = 0},
    {"sft_save_every", 50, "checkpoint the SFT every N steps", min = 1},
    {"sft_dtype", "bf16", "dtype of the exported SFT model", choices = {"fp32", "bf16", "fp16"}},
    -- grpo (experiment 1's)
    {"steps", 200, "GRPO steps per run", min = 1},
    {"prompts_per_step", 8, "fixed prompts (groups) per step, taken in turn", min = 1},
    {"opt", {"O3"}, "compiler levels to sweep (the pairs are timed at the first)",
     choices = {"O0", "O1", "O2", "O3"}},
    {"lr", {0.0, 3e-4}, "GRPO learning rates: 0 (the lr = 0 run of each seed) and at least one "
     .. "above 0", min = 0},
    {"beta", {0.0}, "KL coefficients to sweep", min = 0},
    {"seeds", "4", "every GRPO configuration once per seed: a list '1,2,3', a range '5-8' or a count N",
     check = options.check_seeds},
    -- heldout
    {"heldout_G", 0, "completions per held-out prompt (0: the runs' G)", min = 0},
    {"heldout_size", 0, "matmul's held-out size (0: 1.5 times --size, a multiple of 16)", min = 0},
    {"heldout_tasks", "all", "the held-out tasks asked: all, none, or a list 'fft,conv1d'"},
    {"allow_contaminated", false, "compare even when the base model's corpus holds held-out items "
     .. "(heldout.lua's option of the same name; the results say so)"},
  },
  check = check_lrs,
  profiles = {
    full = {},
    -- For the default small model on a laptop: experiment 1's small profile for GRPO, 256
    -- kernels for the pairs, and the SFT model exported in fp32, so that GRPO starts from
    -- the trained weights themselves (bf16 would round small updates away).
    small = {steps = 40, G = 16, prompts_per_step = 2, max_tokens = 512, size = 128, timeout = 2.0,
             runs = 2, opt = {"O3"}, lr = {0.0, 3e-4}, beta = {0.0}, seeds = "4", kernels = 256,
             sft_dtype = "fp32"},
  },
}


---------------------------------------------------------------------------------------
-- Small helpers
---------------------------------------------------------------------------------------

local path = outputs.path

---------------------------------------------------------------------------------------
-- What every phase shares: the task, its benchmark options, the machine
---------------------------------------------------------------------------------------

-- The run's task as the prompts and the benchmark see it, at the first --opt level.
function M.context(opts, deps, raw_deps)
  if opts.task_list then
    cli.fail("--tasks: the pipeline runs one task (--task): --reward=kernelcompare compares with one task's seed kernel")
  end
  if opts.template == "model" then
    cli.fail("--template=model: the SFT prompts and the held-out comparison are rendered in ChatML (--template=chatml)")
  end
  local isa = prompts.isa(opts.isa, deps.bench)
  local view = setmetatable({isa = isa}, {__index = opts})
  local config = {opt = opts.opt[1]}
  local task = wiring.task(view, config)
  local machine = deps.bench.machine and checks.measuring_machine(deps) or nil
  local name = task.name or "matmul"
  return {deps = deps, raw_deps = raw_deps or {}, isa = isa, task = task, name = name,
          bench_opts = wiring.bench_opts(view, config), machine = machine,
          roofline = wiring.roofline(machine, name, opts.threads)}
end


---------------------------------------------------------------------------------------
-- Phase 2: sft
---------------------------------------------------------------------------------------

-- The pairs of a complete pairs phase, as the SFT trainer takes them.
local function read_pairs(opts)
  local summary = outputs.read_json(path(opts, "pairs.json"))
  if not (summary and summary.complete) then
    cli.fail(path(opts, "pairs.json") .. " is missing: run the pairs phase first (--phases=pairs,...)")
  end
  local examples = {}
  for i, row in ipairs(outputs.read_jsonl(path(opts, "pairs.jsonl"))) do
    examples[i] = {prompt = row.prompt, completion = row.completion}
  end
  if #examples ~= summary.pairs then
    cli.fail(string.format("%s holds %d pairs, pairs.json says %d: remove pairs.json to make them again",
                           path(opts, "pairs.jsonl"), #examples, summary.pairs))
  end
  return examples, summary
end

-- The longest example the model takes: --sft_max_len, else its max_position_embeddings.
local function max_len(opts, model)
  if opts.sft_max_len > 0 then return opts.sft_max_len end
  local config = outputs.read_json(model .. "/config.json")
  return config and config.max_position_embeddings
end

-- Leaves out the examples longer than the model takes, counted with its tokenizer (the
-- engine's; a stand-in's when the primitives are, and none without one).
local function fitting(examples, opts, ctx, model)
  local tok_module = ctx.raw_deps.tokenizer or (not ctx.deps.injected and (rawget(_G, "tokenizer")
                     or package.loaded["engine.tokenizer"])) or nil
  local limit = max_len(opts, model)
  if not (tok_module and limit) then return examples, 0 end
  local tok = cli.try("cannot load the tokenizer of " .. model, tok_module.load, model)
  local kept_, dropped = {}, 0
  for _, e in ipairs(examples) do
    if #tok:encode(e.prompt) + #tok:encode(e.completion) + 1 <= limit then kept_[#kept_ + 1] = e
    else dropped = dropped + 1 end
  end
  if dropped > 0 then log.warn("pairs longer than the model takes are left out", {dropped = dropped, limit = limit}) end
  if #kept_ == 0 then cli.fail("every pair is longer than " .. limit .. " tokens (--sft_max_len)") end
  return kept_, dropped
end

-- The SFT trainer's options: the full model unless --sft_lora_r.
local function sft_train_opts(opts)
  local t = {lr = opts.sft_lr, seed = opts.seed}
  if opts.sft_micro_batch > 0 then t.micro_batch = opts.sft_micro_batch end
  t.lora = wiring.lora(opts, opts.sft_lora_r)
  return t
end

-- What makes the SFT model: the pairs, the base model and the SFT options.
function M.sft_settings(opts, pairs_summary)
  return {experiment = "kernelcompare_sft", pairs = pairs_summary.settings, model = wiring.model_dir(opts, {injected = true}),
          steps = opts.sft_steps, lr = opts.sft_lr, batch = opts.sft_batch, micro_batch = opts.sft_micro_batch,
          lora_r = opts.sft_lora_r, lora_alpha = opts.sft_lora_r > 0 and opts.lora_alpha or nil,
          lora_dropout = opts.sft_lora_r > 0 and opts.lora_dropout or nil, max_len = opts.sft_max_len,
          seed = opts.seed, dtype = opts.dtype, export_dtype = opts.sft_dtype}
end

local function sft_readme(opts, figures)
  return table.concat({
    "# SFT model of the KernelCompare pipeline",
    "",
    string.format("The model %s fine-tuned on %d slow -> fast kernel pairs (`pairs.jsonl` beside",
                  figures.base, figures.examples),
    "this directory): each prompt is experiment 3's later-turn prompt (`prompts.refine`: the",
    "slower kernel and what its evaluation said), each answer the faster kernel.",
    "",
    string.format("- %d steps of %d pairs, learning rate %g (constant), %s", opts.sft_steps,
                  math.min(opts.sft_batch, figures.examples), opts.sft_lr,
                  opts.sft_lora_r > 0 and ("LoRA rank " .. opts.sft_lora_r .. ", merged") or "full fine-tuning"),
    string.format("- loss %.4f at step 1, %.4f at step %d", figures.first_loss or 0, figures.last_loss or 0,
                  figures.steps),
    "",
    "`sft.json` holds the settings and figures; `engine kernelcompare.lua` made it.",
    "",
  }, "\n")
end

local function sft_phase(opts, ctx)
  local examples, summary = read_pairs(opts)
  local settings = M.sft_settings(opts, summary)
  local model_out = path(opts, "sft_model")
  if outputs.matches(outputs.read_json(model_out .. "/sft.json"), settings, model_out .. "/sft.json") then return "complete" end
  local pol, model = wiring.load_policy(opts, ctx.deps)
  local fit, dropped = fitting(examples, opts, ctx, model)
  local run <close> = runs.open_run(path(opts, "sft"), settings, {resume = true})
  local trainer = ctx.deps.train.sft(pol, sft_train_opts(opts))
  local done = runs.resume_trainer(run, trainer, path(opts, "sft"), "resumed the SFT")
  -- the pairs in a permutation per epoch drawn from --seed (batches.lua), so that a
  -- resumed run trains on what an uninterrupted one would
  local cache = {}
  for step = done + 1, opts.sft_steps do
    local stats_ = trainer:step(batches.at(fit, step, opts.sft_batch, opts.seed * 7919 + 1000, cache))
    local save = step % opts.sft_save_every == 0 or step == opts.sft_steps
    run:atomic(function()
      run:log{step = step, loss = stats_.loss, lr = stats_.lr, tokens = stats_.tokens,
              grad_norm = stats_.grad_norm, seconds = stats_.seconds}
      if save then runs.save_trainer(run, trainer, step) end
    end)
    if step % 25 == 0 or step == opts.sft_steps then
      log.info("sft", {step = step, loss = string.format("%.4f", stats_.loss)})
    end
  end
  local losses, last = kc_report.sft_losses(path(opts, "sft"))
  local figures = {examples = #fit, dropped = dropped, steps = opts.sft_steps, first_loss = losses[1],
                   last_loss = losses[last], base = model}
  os.remove(model_out .. "/sft.json")  -- written again last: the export's mark of completion
  trainer:export(model_out, {dtype = opts.sft_dtype})
  outputs.write_text(model_out .. "/README.md", sft_readme(opts, figures))
  json.write(model_out .. "/sft.json", {settings = settings, figures = figures, complete = true})
  log.info("exported the SFT model", {dir = model_out, loss = figures.last_loss})
  return "done"
end

---------------------------------------------------------------------------------------
-- Phase 3: grpo
---------------------------------------------------------------------------------------

-- Experiment 1's options for one sweep: this command's values of every option experiment
-- 1 has, with the KernelCompare reward, the sweep's model and directory. The runs always
-- resume (a run made with other options is refused by experiment 1).
function M.grpo_opts(opts, model, out)
  local o = {}
  for _, d in ipairs(exp1.spec.options) do o[d[1]] = opts[d[1]] end
  o.out, o.model, o.reward, o.resume = out, model, "kernelcompare", true
  o.seed_list, o.profile, o._given = opts.seed_list, opts.profile, {}
  return o
end

-- Each sweep's options: the base model into OUT/grpo (opts.model, nil for the default
-- one), the SFT model into OUT/sft_grpo.
function M.sweep_opts(opts, name)
  local model = path(opts, "sft_model")
  if name == "grpo" then model = opts.model end
  return M.grpo_opts(opts, model, path(opts, name))
end
local sweep_opts = M.sweep_opts

-- Whether every run of a sweep has its steps, with the options it would be made with now.
function M.sweep_done(o, ctx)
  local view = {}
  for k, v in pairs(o) do view[k] = v end
  view.isa = ctx.isa  -- as experiment 1 records it: the machine's for auto
  for _, config in ipairs(exp1.configs(o)) do
    local dir = o.out .. "/" .. sweep.name(config)
    local stored = outputs.read_json(dir .. "/config.json")
    if not stored then return false end
    local identity = runs.as_stored(runs.identity("experiment1", runs.run_opts(view, config), config), stored)
    for k, v in pairs(identity) do if not outputs.same(v, stored[k]) then return false end end
    local run = store.open(dir, {read_only = true})
    local step = run:get("step", 0)
    run:close()
    if step < o.steps then return false end
  end
  return true
end

local function sft_model_ready(opts)
  local mark = outputs.read_json(path(opts, "sft_model/sft.json"))
  return mark and mark.complete
end

local function grpo_phase(opts, ctx)
  local outcome = {}
  for _, s in ipairs(M.sweeps) do
    local o = sweep_opts(opts, s.name)
    if M.sweep_done(o, ctx) then
      outcome[#outcome + 1] = s.name .. " complete"
    else
      log.info("GRPO sweep", {sweep = s.name, model = o.model or wiring.default_model})
      exp1.run(o, ctx.deps)
      outcome[#outcome + 1] = s.name .. " done"
    end
  end
  return table.concat(outcome, ", ")
end

---------------------------------------------------------------------------------------
-- Phase 4: heldout
---------------------------------------------------------------------------------------

-- What a held-out comparison depends on beyond its runs.
local function heldout_settings(opts)
  return {G = opts.heldout_G, heldout_size = opts.heldout_size, heldout_tasks = opts.heldout_tasks,
          steps = opts.steps, seeds = opts.seed_list}
end

-- heldout.lua's command line for one sweep: its prompts and seeds are the same for both.
local function heldout_argv(opts, s)
  local argv = {[0] = "heldout.lua", path(opts, s.name), "--out=" .. path(opts, s.heldout),
                "--device=" .. opts.device, "--G=" .. opts.heldout_G,
                "--heldout_size=" .. opts.heldout_size, "--heldout_tasks=" .. opts.heldout_tasks}
  -- a list of two or more (one seed alone: its only runs, whatever their seed)
  if #opts.seed_list > 1 then argv[#argv + 1] = "--seeds=" .. table.concat(opts.seed_list, ",") end
  if opts.allow_contaminated then argv[#argv + 1] = "--allow_contaminated" end
  return argv
end

local function heldout_phase(opts, ctx)
  local outcome = {}
  local settings = heldout_settings(opts)
  for _, s in ipairs(M.sweeps) do
    local file = path(opts, s.heldout)
    if outputs.matches(outputs.read_json(file), settings, file) then
      outcome[#outcome + 1] = s.heldout .. " complete"
    else
      if not M.sweep_done(sweep_opts(opts, s.name), ctx) then
        cli.fail(path(opts, s.name) .. " has runs without all their steps: run the grpo phase first (--phases=grpo,heldout)")
      end
      heldout.main(heldout_argv(opts, s), ctx.deps)
      local data = json.read(file)
      data.settings = settings
      json.write(file, data)
      outcome[#outcome + 1] = s.heldout .. " done"
    end
  end
  return table.concat(outcome, ", ")
end

---------------------------------------------------------------------------------------
-- The pipeline
---------------------------------------------------------------------------------------

-- A phase that needs an earlier one's output, neither chosen nor there, is refused before
-- anything runs.
local function check_order(opts, ctx, chosen)
  local function need(phase, ready, what)
    if chosen[phase] and not ready then
      cli.fail(string.format("--phases: the %s phase needs %s; add it to --phases", phase, what))
    end
  end
  local pairs_ready = chosen.pairs or (outputs.read_json(path(opts, "pairs.json")) or {}).complete
  need("sft", pairs_ready, "the pairs (phase pairs)")
  need("grpo", chosen.sft or sft_model_ready(opts), "the SFT model (phase sft)")
  local sweeps_ready = chosen.grpo or (M.sweep_done(sweep_opts(opts, "grpo"), ctx)
                                       and M.sweep_done(sweep_opts(opts, "sft_grpo"), ctx))
  need("heldout", sweeps_ready, "finished GRPO runs (phase grpo)")
end

M.run_phase = {pairs = function(opts, ctx) return kc_pairs.phase(opts, ctx, M.chunk) end, sft = sft_phase,
               grpo = grpo_phase, heldout = heldout_phase}

-- Runs the chosen phases in order (deps: the primitives, wiring.lua; a stand-in tokenizer
-- as deps.tokenizer), then writes the report. Returns what each phase did.
function M.run(opts, deps)
  local raw = deps or {}
  deps = wiring.deps(deps)
  local chosen = {}
  for _, p in ipairs(opts.phases) do chosen[p] = true end
  local ctx = M.context(opts, deps, raw)
  -- what a later phase would refuse, refused before anything runs
  if chosen.pairs and opts.from ~= "" then kc_pairs.from_runs(opts.from) end
  if chosen.heldout then
    heldout.heldout_task_names(opts.heldout_tasks)
    if ctx.name == "matmul" and heldout.heldout_size(opts.size, opts.heldout_size) == opts.size then
      cli.fail("--heldout_size=" .. opts.heldout_size .. " is --size: the held-out prompts ask another size")
    end
  end
  check_order(opts, ctx, chosen)
  sys.mkdir(opts.out)
  local outcome = {}
  for _, phase in ipairs(M.phases) do
    if chosen[phase] and M.run_phase[phase] then
      log.info("phase", {phase = phase})
      outcome[phase] = M.run_phase[phase](opts, ctx)
      collectgarbage("collect")  -- a phase's policy and trainer go before the next loads its own
    end
  end
  outcome.report = kc_report.phase(opts)
  return outcome
end

function M.main(argv)
  local opts = options.parse(argv, M.spec)
  local outcome = M.run(opts)
  for _, phase in ipairs(M.phases) do
    if outcome[phase] then print(string.format("%-8s %s", phase, outcome[phase])) end
  end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
