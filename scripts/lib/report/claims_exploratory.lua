-- The claims of docs/results.md's exploratory sections with raw data (the reference
-- machine, the model, the default model's checks, and the GPU node's runs), each figure
-- recomputed from files under data/bench/ and data/. A claim and a section are
-- as recompute.lua says.

local claims = require "report.claims"
local stats = require "core.stats"

local M = {}

local mean, range, map = claims.mean, claims.range, claims.map

local function percent(part, whole) return 100 * part / whole end

-- 60000 as "60,000".
local function thousands(n)
  local s = string.format("%d", n)
  repeat local k; s, k = s:gsub("^(%d+)(%d%d%d)", "%1,%2") until k == 0
  return s
end

local NODE = "data/bench/"

-- The machine of the page's opening, as the confirmatory data recorded it.
local MACHINE = "data/confirmatory/e1/heldout.json"
local machine = {
  name = "Reference machine", raw = {MACHINE},
  figures = function(d) return d:json(MACHINE).machine end,
  rows = {
    {"measured and nominal FP64 peak, cores, clock (heldout.json)",
     "measures its FP64 peak at {measured_peak_gflops:%.1f} GFLOPS over its {cores:%d} cores, against a nominal "
       .. "{peak_gflops:%.1f} GFLOPS from its {ghz:%.1f} GHz clock"},
  },
}

local PRETRAIN_LOG = NODE .. "pretrain-default-2026-11-28.log"
local model = {
  name = "The model",
  raw = {"models/small/config.json", "models/small/pretrain.json", "models/small/model.safetensors"},
  figures = function(d)
    local c, p = d:json("models/small/config.json"), d:json("models/small/pretrain.json")
    local tasks = require("engine.tasks")
    return {millions = p.figures.parameters / 1e6, hidden = c.hidden_size, layers = c.num_hidden_layers,
            heads = c.num_attention_heads, kv = c.num_key_value_heads, mlp = c.intermediate_size,
            mb = d:size("models/small/model.safetensors") / 1e6,
            examples = thousands(p.settings.examples),
            matmul = 100 * (1 - p.settings.task_share), others = 100 * p.settings.task_share,
            other_tasks = #tasks.list("train") - 1, defects = 100 * p.settings.defect_rate,
            vocab = thousands(c.vocab_size), steps = thousands(p.settings.steps), batch = p.settings.batch,
            seconds = p.figures.seconds, loss = p.figures.final_loss, window = p.figures.loss_window,
            log_loss = d:find(PRETRAIN_LOG, "exported .* loss=([%d.]+)")}
  end,
  rows = {
    {"architecture and size (config.json, pretrain.json, model.safetensors)",
     "model of {millions:%.1f}M parameters (hidden {hidden:%d}, {layers:%d} layers, {heads:%d} heads with "
       .. "{kv:%d} key/value heads, MLP {mlp:%d}, tied embeddings, {mb:%.1f} MB in bf16)"},
    {"corpus (pretrain.json)",
     "on {examples:%s} synthetic examples: {matmul:%.0f}% matmul from `scripts/pretraining/kernelgen.lua`, "
       .. "{others:%.0f}% the suite's {other_tasks:%d} other training tasks"},
    {"defect rate (pretrain.json)", "{defects:%.0f}% of the matmul kernels carry a deliberate defect"},
    {"tokenizer (config.json)", "byte-level BPE tokenizer ({vocab:%s} tokens)"},
    {"training (pretrain.json)",
     "Training: {steps:%s} SFT steps of {batch:%d} examples on one H200 (the GPU machine), {seconds:%.0f} s of steps, "
       .. "final loss {loss:%.3f} per token (mean of the last {window:%d} steps)"},
    {"final loss (the raw log)", "final loss {log_loss:%.3f} per token", raw = {PRETRAIN_LOG}},
  },
}

local DEFAULT_TASKS = NODE .. "default-model-tasks-node-2026-11-26.txt"
local DEFAULT_MATMUL = NODE .. "default-model-matmul-2core-2026-11-26.txt"

-- Per task on the GPU node: the training tasks' verified shares, matmul's, and what the
-- held-out tasks' samples were.
local function default_per_task(d)
  local heldout = {}
  for _, t in ipairs(require("engine.tasks").list("heldout")) do heldout[t.name] = true end
  local shares, matmul, held_ok, held_other = {}, nil, 0, 0
  for _, b in ipairs(claims.model_checks(d, DEFAULT_TASKS)) do
    if heldout[b.task] then
      held_ok = held_ok + b.verified
      for status, count in pairs(b.statuses) do
        if status ~= "format_violation" then held_other = held_other + count end
      end
    else
      shares[#shares + 1] = percent(b.verified, b.n)
      if b.task == "matmul" then matmul = percent(b.verified, b.n) end
    end
  end
  local lo, hi = range(shares)
  return {lo = lo, hi = hi, matmul = matmul, n = claims.model_checks(d, DEFAULT_TASKS)[1].n,
          heldout = held_ok == 0 and "none" or tostring(held_ok),
          format = held_other == 0 and "every sample a format violation"
            or (held_other .. " samples of other statuses")}
end

-- The 2-core matmul check, once per ISA (AVX-512, then AVX2/FMA).
local function default_matmul_checks(d)
  local blocks = claims.model_checks(d, DEFAULT_MATMUL)
  if #blocks ~= 2 then error(DEFAULT_MATMUL .. ": expected 2 runs (AVX-512, AVX2/FMA), found " .. #blocks, 0) end
  local out = {}
  for i, b in ipairs(blocks) do
    out[i] = {n = b.n, compile = b.compile, verified = b.verified, wider = b.wider, combinations = b.combinations,
              best = b.best, compile_pct = percent(b.compile, b.n), verified_pct = percent(b.verified, b.n)}
  end
  return out
end

local default_model = {
  name = "The default model of 2026-11-26", raw = {DEFAULT_MATMUL}, figures = default_matmul_checks,
  rows = {
    {"per task: samples", "for every task, {n:%d} samples at temperature 1, seed 1; raw:",
     raw = {DEFAULT_TASKS}, figures = default_per_task},
    {"per task on the GPU node: training tasks' verified share, matmul's, held-out tasks'",
     "{lo:%.0f} to {hi:%.0f}% of each training task's samples verify on the GPU node (policy on its GPU, kernels "
       .. "on 16 cores), {matmul:%.0f}% for matmul, and {heldout:%s} of any held-out task's ({format:%s}:",
     raw = {DEFAULT_TASKS}, figures = default_per_task},
    {"2-core model check: compile",
     "| compile | {1.compile:%d} / {1.n:%d} ({1.compile_pct:%.0f}%) | "
       .. "{2.compile:%d} / {2.n:%d} ({2.compile_pct:%.0f}%) |"},
    {"2-core model check: verification",
     "| pass verification | {1.verified:%d} / {1.n:%d} ({1.verified_pct:%.0f}%) | {2.verified:%d} / {2.n:%d} "
       .. "({2.verified_pct:%.0f}%) |"},
    {"2-core model check: wider vectors", "| kernels with vectors wider than the ISA | {1.wider:%d} | {2.wider:%d} |"},
    {"2-core model check: technique combinations",
     "| technique combinations among the verified kernels | {1.combinations:%d} | {2.combinations:%d} |"},
    {"2-core model check: best kernel", "| best kernel | {1.best:%.1f} GFLOPS | {2.best:%.1f} GFLOPS |"},
  },
}

-- The GPU node's main job: Experiment 1 (4 seeds) and a short Experiment 2 (3 seeds).
local NODE_E1 = NODE .. "node-default-e1-metrics-2026-11-26.jsonl"
local NODE_E1_REPORT = NODE .. "node-default-e1-report-2026-11-26.md"
local NODE_E2 = NODE .. "node-default-e2-metrics-2026-11-26.jsonl"
local NODE_E2_REPORT = NODE .. "node-default-e2-report-2026-11-26.md"

-- A configuration's row of the main job's table: seconds per phase, compiled and
-- verified shares, rewards of steps 1-10 and 21-30, means over its seeds.
local function node_row(g)
  local failed = {compile_error = true, format_violation = true, library_violation = true}
  local function over(fn) return claims.group_interval(g, fn).mean end
  return {sample = over(function(r) return claims.item_mean(r, function(m) return m.seconds.sample end) end),
          evaluate = over(function(r) return claims.item_mean(r, function(m) return m.seconds.evaluate end) end),
          update = over(function(r) return claims.item_mean(r, function(m) return m.seconds.update or 0 end) end),
          compiled = over(function(r) return 100 - claims.status_share(r, failed) end),
          verified = over(function(r) return claims.status_share(r, {ok = true}) end),
          first = over(function(r) return claims.reward_window(r, 1, 10) end),
          last = over(function(r) return claims.reward_window(r, 21, 30) end),
          best = g.best}
end

local function node_e1_figures(d)
  local r = claims.runs_from_records(d, NODE_E1)
  local learned_last = map(r.learned.runs, function(run) return claims.reward_window(run, 21, 30) end)
  local all_best = {}
  for _, g in ipairs{r.base, r.learned} do for _, run in ipairs(g.runs) do all_best[#all_best + 1] = run.best end end
  local lo, hi = range(learned_last)
  local _, top = range(all_best)
  return {base = node_row(r.base), learned = node_row(r.learned), gain = r.gain, steps = r.learned.runs[1].points,
          seeds = #r.learned.runs, learned_last_min = lo, learned_last_max = hi,
          best_low = math.min(r.base.best.mean, r.learned.best.mean), best_top = top,
          yardstick = d:find(NODE_E1_REPORT, "blis, ([%d.]+) GFLOPS by its fastest call"),
          cores = d:find(NODE_E1_REPORT, "Machine: [^,]+, vector ISA [^,]+, target [^,]+, (%d+) cores"),
          noise = claims.report_noise(d, NODE_E1_REPORT)}
end

local function node_e2_figures(d)
  local r = claims.runs_from_records(d, NODE_E2)
  return {gain = r.gain, best = math.max(r.base.best.mean, r.learned.best.mean),
          iterations = r.learned.runs[1].points, seeds = #r.learned.runs}
end

local node = {
  name = "GPU node main job, 2026-11-26", raw = {NODE_E1}, figures = node_e1_figures,
  rows = {
    {"steps and seeds", "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then"},
    {"the node's cores (report)", "on the H200 machine, {cores:%d}-core Sapphire Rapids", raw = {NODE_E1_REPORT}},
    {"lr = 0 row: seconds, compiled, verified, rewards of steps 1-10 / 21-30, best ± t half-width",
     "| lr = 0 | {base.sample:%.2f} s | {base.evaluate:%.2f} s | - | {base.compiled:%.0f}% | "
       .. "{base.verified:%.0f}% | "
       .. "{base.first:%.1f} / {base.last:%.1f} | {base.best.mean:%.1f} ± {base.best.half:%.1f} |"},
    {"lr = 3e-4 row",
     "| lr = 3e-4 | {learned.sample:%.2f} s | {learned.evaluate:%.2f} s | {learned.update:%.2f} s | "
       .. "{learned.compiled:%.0f}% | {learned.verified:%.0f}% | {learned.first:%.1f} / {learned.last:%.1f} | "
       .. "{learned.best.mean:%.1f} ± {learned.best.half:%.1f} |"},
    {"reward: learning runs' steps 1-10 and range of steps 21-30, baseline's steps 21-30",
     "reward rose from about {learned.first:%.0f} to {learned_last_min:%.0f}-{learned_last_max:%.0f} "
       .. "in every seed "
       .. "while the baseline's stayed near {base.last:%.0f}:"},
    {"reward gain, paired by seed, and the smallest exact p of four seeds",
     "a reward gain of {gain.final.mean:%+.1f} ± {gain.final.half:%.1f} over the four seeds (exploratory: four "
       .. "seeds, whose sign and permutation tests cannot go below p = {gain.final.smallest_p:%.3f})"},
    {"best-kernel gain, paired by seed",
     "The best kernel does not differ ({gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS)."},
    {"best kernels: the lower configuration's mean to the best single kernel; the yardstick (report)",
     "The best kernels reach {best_low:%.0f}-{best_top:%.0f} GFLOPS (the lower configuration's mean, the best "
       .. "single kernel), about twice the yardstick (BLIS, the fastest library there, measured at each run's "
       .. "start: {yardstick:%.1f} GFLOPS", raw = {NODE_E1, NODE_E1_REPORT}},
    {"control kernel's spread (report)",
     "spread on that node was {noise.min:%.1f} to {noise.max:%.1f}% (above the {noise.bound:%.0f}% bound in "
       .. "{noise.above:%d} of {noise.runs:%d} runs:", raw = {NODE_E1, NODE_E1_REPORT}},
    {"Experiment 2: reward gain, best kernels (the higher configuration's mean)",
     "Experiment 2's three iterations (seeds 1-{seeds:%d}): a reward gain of {gain.final.mean:%+.1f} ± "
       .. "{gain.final.half:%.1f}, best kernels about {best:%.0f} GFLOPS", raw = {NODE_E2}, figures = node_e2_figures},
    {"report's Table II equals the metrics (Experiment 1)", raw = {NODE_E1, NODE_E1_REPORT},
     agree = function(d) return claims.table2_agreement(d, claims.runs_from_records(d, NODE_E1), NODE_E1_REPORT) end},
    {"report's Table II equals the metrics (Experiment 2)", raw = {NODE_E2, NODE_E2_REPORT},
     agree = function(d) return claims.table2_agreement(d, claims.runs_from_records(d, NODE_E2), NODE_E2_REPORT) end},
  },
}

-- Table II at O0, O1 and O3 on the GPU node, with the held-out comparison.
local OLEVELS = NODE .. "node-olevels-e1-metrics-2026-11-26.tsv"
local OLEVELS_REPORT = NODE .. "node-olevels-e1-report-2026-11-26.md"
local OLEVELS_HELDOUT = NODE .. "node-olevels-heldout-2026-11-26.json"

-- One level's runs (base, learned, their gain) and its held-out comparison.
local function olevels_level(d, opt)
  local r = claims.runs_from_records(d, OLEVELS, true)
  for _, p in ipairs(r.pairs) do
    if p.learned.config.opt == opt then
      local h = claims.heldout(d, OLEVELS_HELDOUT).configs[p.learned.name]
      if not h then error(OLEVELS_HELDOUT .. ": no held-out comparison for " .. p.learned.name, 0) end
      return {base = p.base, learned = p.learned, gain = p.gain, heldout = h}
    end
  end
  error(OLEVELS .. ": no runs at " .. opt, 0)
end

local function olevels_figures(d)
  local out = {}
  for _, opt in ipairs{"O0", "O1", "O3"} do out[opt] = olevels_level(d, opt) end
  local r = claims.runs_from_records(d, OLEVELS, true)
  out.steps, out.seeds = r.pairs[1].learned.runs[1].points, #r.pairs[1].learned.runs
  -- every exact test of the table: reward gains, held-out gains, their "other size" part
  local ps, wmin, wmax = {}, math.huge, -math.huge
  for _, opt in ipairs{"O0", "O1", "O3"} do
    local l = out[opt]
    for _, g in ipairs{l.gain.final, l.heldout.overall.roofline, l.heldout.parts.sizes.roofline} do
      ps[g.perm_p] = true
    end
    wmin = math.min(wmin, l.heldout.parts.wordings.ok_min)
    wmax = math.max(wmax, l.heldout.parts.wordings.ok_max)
  end
  local distinct = {}
  for p in pairs(ps) do distinct[#distinct + 1] = p end
  out.perm_p = #distinct == 1 and string.format("%.2f", distinct[1]) or "not one value"
  out.wordings_min, out.wordings_max = wmin, wmax
  out.size = out.O3.heldout.parts.sizes.size
  out.sizes = {O1 = out.O1.heldout.parts.sizes, O3 = out.O3.heldout.parts.sizes}
  return out
end

-- A level's row of the table: the template names the level as L.
local function olevels_row(opt)
  local row = ("| L | {L.base.best.mean:%.1f} / {L.learned.best.mean:%.1f} | {L.base.final.mean:%.1f} / "
    .. "{L.learned.final.mean:%.1f} | {L.gain.final.mean:%+.1f} ± {L.gain.final.half:%.1f} | "
    .. "{L.heldout.overall.roofline.values:%+.2f} | {L.heldout.parts.sizes.roofline.values:%+.2f} |")
    :gsub("{L%.", "{" .. opt .. "."):gsub("^| L |", "| " .. opt .. " |")
  return {opt .. " row: best kernels, final rewards, reward gain, held-out gains per seed", row}
end

local olevels = {
  name = "GPU node, O0/O1/O3, 2026-11-26", raw = {OLEVELS, OLEVELS_HELDOUT}, figures = olevels_figures,
  rows = {
    {"steps and seeds", "the small profile with {steps:%d} steps, seeds 1-{seeds:%d}, then `heldout.lua`",
     raw = {OLEVELS}},
    olevels_row("O0"), olevels_row("O1"), olevels_row("O3"),
    {"other size: roofline score ranges per seed, O3 and O1",
     "on prompts at {size:%d}^3 (the \"other size\" part) the learned policies' kernels reach "
       .. "{sizes.O3.learned.roofline_min:%.0f} to {sizes.O3.learned.roofline_max:%.0f}% of the peak against "
       .. "{sizes.O3.base.roofline_min:%.0f} to {sizes.O3.base.roofline_max:%.0f}% for the base model's at O3, and "
       .. "{sizes.O1.learned.roofline_min:%.0f} to {sizes.O1.learned.roofline_max:%.0f}% against "
       .. "{sizes.O1.base.roofline_min:%.0f} to {sizes.O1.base.roofline_max:%.0f}% at O1.", raw = {OLEVELS_HELDOUT}},
    {"other wordings: verified share range, every level, policy and seed",
     "ones verify {wordings_min:%.0f} to {wordings_max:%.0f}% of the kernels they write", raw = {OLEVELS_HELDOUT}},
    {"every permutation p of the table", "(every permutation p here is {perm_p:%s})"},
    {"the held-out JSON's stored gains equal those recomputed from its kernels", raw = {OLEVELS_HELDOUT},
     agree = function(d) return claims.heldout_agreement(d, OLEVELS_HELDOUT) end},
    {"report's Table II equals the metrics", raw = {OLEVELS, OLEVELS_REPORT},
     agree = function(d)
       return claims.table2_agreement(d, claims.runs_from_records(d, OLEVELS, true), OLEVELS_REPORT)
     end},
  },
}

-- Multi-turn refinement against single-turn on the GPU node (experiment3.lua's runs).
local E3 = NODE .. "node-e3-2026-11-26"

-- A run's mean over its steps of one turn's figure (mean_reward, or verified: a share).
local function e3_per_turn(run, t, field)
  return mean(map(claims.items(run), function(m)
    if m.turns == 1 then  -- the single-turn control: its one turn is the step
      return field == "verified" and (m.counts.ok or 0) / m.kernels or m.mean_reward
    end
    return m.per_turn[t][field]
  end))
end

-- A run's mean reward over its steps, every turn together.
local function e3_reward(run) return claims.item_mean(run, function(m) return m.mean_reward end) end

local function e3_figures(d)
  local r = claims.runs_from_dirs(d, E3)
  local single, multi
  for _, g in pairs(r.groups) do
    if g.config.turns == 1 then single = g else multi = g end
  end
  if not (single and multi) then error(E3 .. ": needs runs of one turn and of several", 0) end
  local function row(g, turns)
    local out = {reward = claims.group_interval(g, e3_reward), best = g.best,
                 kernels = g.runs[1].metrics[1].kernels, seeds = #g.runs, turn = {}}
    for t = 1, turns do
      local function reward(run) return e3_per_turn(run, t, "mean_reward") end
      local function verified(run) return 100 * e3_per_turn(run, t, "verified") end
      out.turn[t] = {reward = claims.group_interval(g, reward), verified = claims.group_interval(g, verified)}
    end
    return out
  end
  local turns = multi.config.turns
  local out = {single = row(single, 1), multi = row(multi, turns), turns = turns,
               steps = #claims.items(multi.runs[1])}
  local function paired(fn)
    local by_seed = {}
    for _, run in ipairs(single.runs) do by_seed[run.seed] = fn(run) end
    return claims.over_seeds(map(multi.runs, function(run) return fn(run) - by_seed[run.seed] end))
  end
  out.gain = {reward = paired(e3_reward), best = paired(function(run) return run.best end)}
  return out
end

local e3 = {
  name = "GPU node, multi-turn, 2026-11-26", raw = {E3}, figures = e3_figures,
  rows = {
    {"steps, seeds, kernels a step",
     "{steps:%d} steps of 2 prompts; 24 kernels per prompt in one group for the single-turn control, 8 "
       .. "episodes of three turns for the other, so {multi.kernels:%d} kernels a step in both configurations; "
       .. "`lr = 3e-4`, the paper's reward, raw turn rewards, discount 1, turn-level leave-one-out advantages; "
       .. "seeds 1-{multi.seeds:%d}"},
    {"single-turn row",
     "| single turn (24 kernels per prompt in one group) | {single.reward.mean:%.2f} ± {single.reward.half:%.2f} | "
       .. "{single.best.mean:%.1f} ± {single.best.half:%.1f} | {single.turn.1.verified.mean:%.1f} | - | - |"},
    {"three-turn row",
     "| three turns (8 episodes per prompt) | {multi.reward.mean:%.2f} ± {multi.reward.half:%.2f} | "
       .. "{multi.best.mean:%.1f} ± {multi.best.half:%.1f} | {multi.turn.1.verified.mean:%.1f} | "
       .. "{multi.turn.2.verified.mean:%.1f} | {multi.turn.3.verified.mean:%.1f} |"},
    {"mean reward per turn",
     "the three-turn runs' mean reward is {multi.turn.1.reward.mean:%.1f} at the first turn, "
       .. "{multi.turn.2.reward.mean:%.1f} at the second and {multi.turn.3.reward.mean:%.1f} at the third"},
    {"multi-turn minus single-turn, paired by seed",
     "mean reward {gain.reward.mean:%+.2f} ± {gain.reward.half:%.2f} ({gain.reward.sign_positive:%d} of "
       .. "{gain.reward.n:%d} seeds positive), best kernel {gain.best.mean:%+.1f} ± {gain.best.half:%.1f} GFLOPS"},
  },
}

-- The KernelCompare recipe on the GPU node: four policies from two held-out comparisons
-- (base and GRPO only; SFT only and SFT then GRPO), paired by seed.
local KC = NODE .. "node-kernelcompare-2026-11-26"
local KC_GRPO, KC_SFT = KC .. "/heldout_grpo.json", KC .. "/heldout_sft_grpo.json"

local function kernelcompare_figures(d)
  local a, b = claims.heldout(d, KC_GRPO), claims.heldout(d, KC_SFT)
  if a.seeds ~= b.seeds then error("the two comparisons hold different seeds", 0) end
  local policies = {base = {a, "base"}, grpo = {a, "learned"}, sft = {b, "base"}, sft_grpo = {b, "learned"}}
  local function values(name, pick)
    local h, who = policies[name][1], policies[name][2]
    return map(h.per_seed, function(x) return pick(x, who) end)
  end
  local function overall(f, scale) return function(x, who) return x.overall[who][f] * (scale or 1) end end
  local function wordings(x, who) return 100 * x.parts.wordings[who].ok end
  local out = {seeds = a.seeds}
  for name in pairs(policies) do
    out[name] = {roofline = stats.interval(values(name, overall("roofline"))),
                 ok = stats.interval(values(name, overall("ok", 100))),
                 wordings_ok = stats.interval(values(name, wordings))}
  end
  local base = values("base", overall("roofline"))
  for _, name in ipairs{"sft", "grpo", "sft_grpo"} do
    local v, diffs = values(name, overall("roofline")), {}
    for i = 1, #v do diffs[i] = v[i] - base[i] end
    out[name].gain = claims.over_seeds(diffs)
    out[name].sizes = stats.interval(values(name, function(x, who) return x.parts.sizes[who].roofline end))
  end
  out.base.sizes = stats.interval(values("base", function(x, who) return x.parts.sizes[who].roofline end))
  local pairs_summary = d:json(KC .. "/pairs.json")
  local sft_record = d:json(KC .. "/sft_model/sft.json").figures
  out.pairs = {n = pairs_summary.pairs, kernels = pairs_summary.kernels.generated,
               verified = pairs_summary.kernels.verified, median = pairs_summary.speedup.median}
  out.sft_record = sft_record
  return out
end

-- A policy's row of the table: roofline score, verified share, and that share for the
-- other wordings.
local function kernelcompare_row(label, name)
  return {label .. " row",
          "| " .. label .. " | {" .. name .. ".roofline.mean:%.2f} ± {" .. name .. ".roofline.half:%.2f} | {"
            .. name .. ".ok.mean:%.2f} ± {" .. name .. ".ok.half:%.2f} | {" .. name
            .. ".wordings_ok.mean:%.2f} ± {" .. name .. ".wordings_ok.half:%.2f} |"}
end

local kernelcompare = {
  name = "GPU node, KernelCompare, 2026-11-26", raw = {KC_GRPO, KC_SFT}, figures = kernelcompare_figures,
  rows = {
    {"pairs and SFT",
     "{pairs.verified:%d} of kernelgen's matmul kernels measured there (all verified), {pairs.n:%d} pairs of a "
       .. "kernel and one at least 1.2 times faster (median speedup {pairs.median:%.2f})",
     raw = {KC .. "/pairs.json", KC .. "/sft_model/sft.json"}},
    {"SFT steps and loss",
     "{sft_record.steps:%d} SFT steps of 16 pairs at `lr = 1e-4` (loss {sft_record.first_loss:%.3f} to "
       .. "{sft_record.last_loss:%.3f})", raw = {KC .. "/sft_model/sft.json"}},
    kernelcompare_row("base model", "base"), kernelcompare_row("SFT only", "sft"),
    kernelcompare_row("GRPO only", "grpo"), kernelcompare_row("SFT then GRPO", "sft_grpo"),
    {"gains over the base model, paired by seed",
     "SFT only {sft.gain.mean:%+.2f} ± {sft.gain.half:%.2f}\npoints, GRPO only {grpo.gain.mean:%+.2f} ± "
       .. "{grpo.gain.half:%.2f}, SFT then GRPO {sft_grpo.gain.mean:%+.2f} ± {sft_grpo.gain.half:%.2f} "
       .. "({sft.gain.sign_positive:%d} of 4, {grpo.gain.sign_positive:%d} of 4 and "
       .. "{sft_grpo.gain.sign_positive:%d} of 4\nseeds positive;"},
    {"other wordings: verified share, base and SFT",
     "the base model verifies {base.wordings_ok.mean:%.0f}% of its kernels for prompts\nworded unlike its "
       .. "training prompts, the SFT model {sft.wordings_ok.mean:%.0f}%"},
    {"other size: roofline score, SFT and base",
     "at the other size it changes nothing ({sft.sizes.mean:%.2f}% against\n{base.sizes.mean:%.2f}% of the "
       .. "roofline)"},
    {"heldout_grpo.json's stored gains equal those recomputed from its kernels", raw = {KC_GRPO},
     agree = function(d) return claims.heldout_agreement(d, KC_GRPO) end},
    {"heldout_sft_grpo.json's stored gains equal those recomputed from its kernels", raw = {KC_SFT},
     agree = function(d) return claims.heldout_agreement(d, KC_SFT) end},
  },
}

-- The opening's machine (first on the page), then the sections after the confirmatory ones.
function M.opening() return claims.section_claims(machine) end

function M.claims()
  local all = {}
  for _, section in ipairs{model, default_model, node, olevels, e3, kernelcompare} do
    for _, c in ipairs(claims.section_claims(section)) do all[#all + 1] = c end
  end
  return all
end

return M
