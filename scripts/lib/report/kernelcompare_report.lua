-- KernelCompare's report (kernelcompare.lua's last phase): the four policies (the base
-- model, SFT only, GRPO only, SFT then GRPO) from the two held-out comparisons, per seed,
-- and the three differences the recipe asks about with their 95% t intervals; the pairs
-- and the SFT in a few lines. OUT/report.md, written from whatever exists.

local outputs = require "core.outputs"
local results = require "report.results"
local seed_results = require "report.seed_results"
local stats = require "core.stats"
local wiring = require "method.wiring"

local M = {}

local path = outputs.path

-- The SFT losses the run recorded, by step (the last record of a step repeated after a
-- resume wins).
function M.sft_losses(dir)
  local by_step, last = {}, 0
  for _, rec in ipairs(outputs.read_jsonl(dir .. "/metrics.jsonl")) do
    if type(rec.step) == "number" and type(rec.loss) == "number" then
      by_step[rec.step] = rec.loss
      last = math.max(last, rec.step)
    end
  end
  return by_step, last
end

-- The four policies: which comparison holds each, and as which of its two policies.
M.policies = {
  {name = "base model", file = "heldout_grpo.json", side = "base"},
  {name = "SFT only", file = "heldout_sft_grpo.json", side = "base"},
  {name = "GRPO only", file = "heldout_grpo.json", side = "learned"},
  {name = "SFT then GRPO", file = "heldout_sft_grpo.json", side = "learned"},
}

-- The differences the recipe asks about, each a policy minus the base model.
M.differences = {{"SFT only", "base model"}, {"GRPO only", "base model"}, {"SFT then GRPO", "base model"}}

-- The figures the report gives, with how a value is shown.
M.figures = {{key = "roofline", name = "roofline score", scale = 1, unit = "%"},
             {key = "ok", name = "verified share", scale = 100, unit = "%"}}

-- Per learning configuration, per policy, per seed: the figures of each part and overall.
-- {[configuration] = {[policy] = {[seed] = {overall =, parts = {[part] = figures}}}}},
-- with the parts and the comparisons' machines.
function M.collect(out)
  local by_config, parts, machines = {}, nil, {}
  for _, p in ipairs(M.policies) do
    local data = outputs.read_json(out .. "/" .. p.file)
    if data and data.complete then
      parts = parts or data.parts
      machines[p.file] = data.machine
      for _, rec in ipairs(data.seeds or {}) do
        local key = rec.configuration or rec.run
        by_config[key] = by_config[key] or {}
        local per = by_config[key]
        per[p.name] = per[p.name] or {}
        local entry = {overall = rec.overall and rec.overall[p.side], parts = {}}
        for name, f in pairs(rec.parts or {}) do entry.parts[name] = f[p.side] end
        per[p.name][rec.seed] = entry
      end
    end
  end
  return by_config, parts or {}, machines
end

-- One figure of one scope over the seeds: {[seed] = value}.
local function values_of(per_seed, scope, key, scale)
  local out = {}
  for seed, e in pairs(per_seed or {}) do
    local f = scope == "overall" and e.overall or e.parts[scope]
    if f and type(f[key]) == "number" then out[seed] = f[key] * scale end
  end
  return out
end

local function list_of(by_seed)
  local seeds, values = {}, {}
  for seed in pairs(by_seed) do seeds[#seeds + 1] = seed end
  table.sort(seeds)
  for i, seed in ipairs(seeds) do values[i] = by_seed[seed] end
  return values, seeds
end

-- "mean ± half (n)" of a figure over the seeds.
local function cell(by_seed)
  local values = list_of(by_seed)
  local iv = stats.interval(values)
  if iv.n == 0 then return "-" end
  return seed_results.pm(iv, "%.2f") .. string.format(" (%d)", iv.n)
end

-- The table of the four policies for one learning configuration.
local function policy_table(per, parts)
  local scopes = {}
  for _, p in ipairs(parts) do scopes[#scopes + 1] = p end
  scopes[#scopes + 1] = "overall"
  local head, align = {"policy"}, {"---"}
  for _, scope in ipairs(scopes) do
    for _, f in ipairs(M.figures) do
      head[#head + 1], align[#align + 1] = scope .. ": " .. f.name .. " (" .. f.unit .. ")", "---:"
    end
  end
  local lines = {"| " .. table.concat(head, " | ") .. " |", "| " .. table.concat(align, " | ") .. " |"}
  for _, p in ipairs(M.policies) do
    local cells = {p.name}
    for _, scope in ipairs(scopes) do
      for _, f in ipairs(M.figures) do cells[#cells + 1] = cell(values_of(per[p.name], scope, f.key, f.scale)) end
    end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return lines, scopes
end

-- a - b by seed, over the seeds both have.
local function paired(a, b)
  local out = {}
  for seed, v in pairs(a) do if b[seed] then out[seed] = v - b[seed] end end
  return out
end

-- The table of the three differences by seed, each figure and scope, with the 95% t
-- interval and the exact sign and permutation tests.
local function difference_table(per, scopes)
  local lines = {"| difference | scope | figure | by seed | mean ± 95% | sign test | permutation |",
                 "| --- | --- | --- | --- | ---: | ---: | ---: |"}
  for _, d in ipairs(M.differences) do
    for _, scope in ipairs(scopes) do
      for _, f in ipairs(M.figures) do
        local diff = paired(values_of(per[d[1]], scope, f.key, f.scale), values_of(per[d[2]], scope, f.key, f.scale))
        local values, seeds = list_of(diff)
        if #values > 0 then
          local shown = {}
          for i, v in ipairs(values) do shown[i] = string.format("%d: %+.2f", seeds[i], v) end
          local sign, perm = stats.sign_test(values), stats.permutation_test(values)
          local tests = sign.n == 0 and "no nonzero difference | -"
            or string.format("%d of %d positive, p = %.3g | p = %.3g%s", sign.positive, sign.n, sign.p, perm.p,
                             perm.exact and "" or " (sampled)")
          lines[#lines + 1] = string.format("| %s − %s | %s | %s (points) | %s | %s | %s |", d[1], d[2], scope,
            f.name, table.concat(shown, ", "), seed_results.pm(stats.interval(values), "%+.2f"), tests)
        end
      end
    end
  end
  return lines
end

-- The pairs and the SFT, in a few lines.
local function inputs_text(out)
  local lines = {}
  local p = outputs.read_json(out .. "/pairs.json")
  if p and p.complete then
    lines[#lines + 1] = string.format("- **Pairs** (`pairs.jsonl`): %d, drawn from %d possible among %d verified "
      .. "kernels (%d of %d kernelgen kernels verified on this machine; %d samples of %d earlier runs); "
      .. "median speedup %.2f (%.2f to %.2f), at least %.2f; %s at %s.",
      p.pairs, p.possible, p.candidates, p.kernels.verified, p.kernels.generated, p.earlier.samples,
      p.earlier.runs, p.speedup.median, p.speedup.min, p.speedup.max, p.settings.min_speedup,
      p.settings.task, p.settings.opt)
  else
    lines[#lines + 1] = "- **Pairs**: not made yet (phase pairs)."
  end
  local s = outputs.read_json(out .. "/sft_model/sft.json")
  if s and s.complete then
    lines[#lines + 1] = string.format("- **SFT** (`sft_model/`): %d steps of %d pairs at lr %g from %s; loss %.4f at "
      .. "step 1, %.4f at step %d%s.", s.settings.steps, s.settings.batch, s.settings.lr, s.figures.base,
      s.figures.first_loss or 0, s.figures.last_loss or 0, s.figures.steps,
      (s.figures.dropped or 0) > 0 and string.format(" (%d pairs too long left out)", s.figures.dropped) or "")
  else
    local losses, last = M.sft_losses(out .. "/sft")
    lines[#lines + 1] = last > 0
      and string.format("- **SFT**: unfinished, step %d; loss %.4f at step 1, %.4f at step %d.", last,
                        losses[1] or 0, losses[last], last)
      or "- **SFT**: not run yet (phase sft)."
  end
  return lines
end

function M.report_text(out)
  local lines = {
    "# KernelCompare: SFT on slow → fast rewrites, then GRPO with the 0.4/0.4/0.2 reward",
    "",
    "Written by `engine kernelcompare.lua` from what `" .. out .. "` holds.",
    "",
  }
  for _, l in ipairs(inputs_text(out)) do lines[#lines + 1] = l end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "## Held-out prompts"
  lines[#lines + 1] = ""
  local by_config, parts, machines = M.collect(out)
  local keys = results.sorted_keys(by_config)
  if #keys == 0 then
    lines[#lines + 1] = "No held-out comparison yet (phases grpo and heldout)."
    return table.concat(lines, "\n") .. "\n"
  end
  lines[#lines + 1] = "Base model and GRPO only come from `heldout_grpo.json`, SFT only and SFT then GRPO "
    .. "from `heldout_sft_grpo.json`: each comparison times its two policies' kernels side by side, "
    .. "but the two comparisons are timed in separate batches, so SFT only − base model and SFT then "
    .. "GRPO − base model also carry any drift of the machine's speed between them (the verified "
    .. "share does not depend on timing). Both ask the same prompts with the same sampling seeds."
  lines[#lines + 1] = ""
  lines[#lines + 1] = "Cells: mean ± half-width of the 95% t interval over the seeds (number of seeds). "
    .. "The roofline score is a kernel's speed as a percentage of its task's roofline on the measuring "
    .. "machine (0 when not verified); \"overall\" is the mean of the parts."
  local any_machine = next(machines) and machines[next(machines)]
  lines[#lines + 1] = wiring.rooflines_text(any_machine)
  for _, key in ipairs(keys) do
    lines[#lines + 1] = ""
    lines[#lines + 1] = "### `" .. key .. "`"
    lines[#lines + 1] = ""
    local table_, scopes = policy_table(by_config[key], parts)
    for _, l in ipairs(table_) do lines[#lines + 1] = l end
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Differences by seed (points), with the exact two-sided sign and permutation tests:"
    lines[#lines + 1] = ""
    for _, l in ipairs(difference_table(by_config[key], scopes)) do lines[#lines + 1] = l end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The phase: OUT/report.md from what exists; its path.
function M.phase(opts)
  outputs.write_text(path(opts, "report.md"), M.report_text(opts.out))
  return path(opts, "report.md")
end

return M
