-- kernelcompare.lua on the stand-ins (fakes.lua): the slow -> fast pairs and their SFT
-- prompts, the SFT and its export, the two GRPO sweeps with the KernelCompare reward, the
-- held-out comparisons and the report; a pipeline stopped by an error in the grpo phase
-- continues without redoing the pairs and the SFT; the options' errors.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local args = require "engine.args"
local cli = require "core.cli"
local fakes = require "fakes"
local primitives = require "primitives"
local prompts = require "method.prompts"
local stages = require "method.stages"
local wiring = require "method.wiring"

local kc = dofile(engine.scripts[1] .. "/kernelcompare.lua")
local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")

-- The stand-ins, with a bench that times an unlabelled kernel (kernelgen's, the seed) by
-- the techniques it uses, give or take up to 30% by its length, so that kernels differ in
-- speed within a technique set too; and a machine with measured rooflines.
local function deps()
  local d = fakes.deps()
  local evaluate_batch = d.bench.evaluate_batch
  d.bench.evaluate_batch = function(sources, opts)
    local out = evaluate_batch(sources, opts)
    for i, code in ipairs(sources) do
      if out[i].status == "ok" and not code:find("techniques:", 1, true) then
        local n = #stages.list(stages.detect(code))
        out[i].gflops = (1.0 + 10.0 * n) * (1 + (#code % 7) / 20)
      end
    end
    return out
  end
  d.bench.machine = function()
    return {cores = 2, peak_gflops = 100.0, measured_peak_gflops = 50.0, measured_bandwidth_gbps = 20.0}
  end
  return d
end

local SMALL = {"--G=4", "--prompts_per_step=2", "--size=32", "--steps=2", "--kernels=40", "--pairs=30",
               "--sft_steps=3", "--sft_batch=4", "--sft_save_every=2", "--heldout_tasks=none"}

local function parse(out, extra)
  local list = {"--out=" .. out}
  for _, a in ipairs(SMALL) do list[#list + 1] = a end
  for _, a in ipairs(extra or {}) do list[#list + 1] = a end
  return primitives.parse(kc, "kernelcompare", list)
end

local function rows(out)
  local list = {}
  for line in io.lines(out .. "/pairs.jsonl") do list[#list + 1] = json.decode(line) end
  return list
end

-- The kernel a refine prompt hands back.
local function previous_kernel(prompt)
  return prompt:match("Here is your previous kernel:\n```c\n(.-)\n```")
end

t.test("pairs: a slow kernel with one at least --min_speedup faster, in experiment 3's refine format", function()
  local out = t.tmpdir()
  local d = deps()
  local opts = parse(out, {"--phases=pairs", "--seeds=2"})
  local outcome = kc.run(opts, d)
  t.eq(outcome.pairs, "done")
  local list = rows(out)
  local summary = json.read(out .. "/pairs.json")
  t.eq(#list, summary.pairs)
  t.ok(#list > 0 and #list <= 30, #list)
  t.eq(summary.kernels.generated, 40)
  t.eq(summary.kernels.verified, 40, "kernelgen's kernels verify by construction")
  local ctx = kc.context(opts, wiring.deps(d))
  local seen = {}
  for _, r in ipairs(list) do
    t.ok(r.fast.speed >= 1.2 * r.slow.speed, string.format("%.3f -> %.3f", r.slow.speed, r.fast.speed))
    t.ok(r.speedup >= 1.2)
    local key = r.slow.source .. ">" .. r.fast.source
    t.ok(not seen[key], "a pair once: " .. key)
    seen[key] = true
    -- the refine prompt: the task, the slow kernel, its evaluation; the answer: the fast one
    local code = previous_kernel(r.prompt)
    t.ok(code and code:find("matmul_optimized", 1, true), "the slow kernel is in the prompt")
    t.eq(r.prompt, prompts.render(prompts.refine(code, r.feedback, ctx.task)))
    t.contains(r.feedback, "Correct. Speed: ")
    t.contains(r.feedback, "of this machine's limit of 50")
    t.contains(r.prompt, "Its evaluation:")
    t.contains(r.prompt, "M = 32, N = 32, K = 32")
    t.ok(r.completion:match("^```c\n.*matmul_optimized.*\n```$"), r.completion)
    t.ok(r.completion ~= "```c\n" .. code .. "\n```", "the answer is another kernel")
  end
  -- the same seed draws the same pairs; another seed others
  local again = t.tmpdir()
  kc.run(parse(again, {"--phases=pairs", "--seeds=2"}), deps())
  t.eq(t.read(again .. "/pairs.jsonl"), t.read(out .. "/pairs.jsonl"))
  local other = t.tmpdir()
  kc.run(parse(other, {"--phases=pairs", "--seed=2"}), deps())
  t.ok(t.read(other .. "/pairs.jsonl") ~= t.read(out .. "/pairs.jsonl"), "another seed, other pairs")
  -- a higher bar keeps fewer pairs, each above it
  local strict = t.tmpdir()
  kc.run(parse(strict, {"--phases=pairs", "--seeds=2", "--min_speedup=3", "--pairs=1000"}), deps())
  local all = t.tmpdir()
  kc.run(parse(all, {"--phases=pairs", "--seeds=2", "--min_speedup=1.2", "--pairs=1000"}), deps())
  local n_strict, n_all = #rows(strict), #rows(all)
  t.ok(n_strict > 0 and n_strict < n_all, n_strict .. " of " .. n_all)
  t.eq(json.read(all .. "/pairs.json").possible, n_all, "below --pairs every possible pair is kept")
  for _, r in ipairs(rows(strict)) do t.ok(r.speedup >= 3, r.speedup) end
  -- a complete phase is not made again, and other options are refused, named
  local d2 = deps()
  t.eq(kc.run(parse(out, {"--phases=pairs", "--seeds=2"}), d2).pairs, "complete")
  t.eq(d2.bench.calls, 0)
  local err = t.raises(function() kc.run(parse(out, {"--phases=pairs", "--seeds=2", "--pairs=10"}), deps()) end,
                       "made with other options")
  t.contains(tostring(err), "pairs")
end)

t.test("pairs: a phase stopped while judging keeps the batches it judged", function()
  local chunk = kc.chunk
  kc.chunk = 16
  local out = t.tmpdir()
  local d1 = deps()
  local evaluate_batch = d1.bench.evaluate_batch
  d1.bench.evaluate_batch = function(sources, o)
    if d1.bench.calls == 1 then error("the bench failed") end
    return evaluate_batch(sources, o)
  end
  local ok, err = pcall(kc.run, parse(out, {"--phases=pairs"}), d1)
  t.ok(not ok and tostring(err):find("the bench failed", 1, true), tostring(err))
  t.ok(not sys.exists(out .. "/pairs.json"), "no pairs yet")
  local d2 = deps()
  kc.run(parse(out, {"--phases=pairs"}), d2)
  kc.chunk = chunk
  t.eq(d2.bench.kernels, 40 - 16, "the first batch was not judged again")
  local whole = t.tmpdir()
  kc.run(parse(whole, {"--phases=pairs"}), deps())
  t.eq(t.read(out .. "/pairs.jsonl"), t.read(whole .. "/pairs.jsonl"), "the same pairs as an uninterrupted phase")
end)

t.test("pairs of a task of the suite, and from earlier runs' verified samples", function()
  local out = t.tmpdir()
  kc.run(parse(out, {"--phases=pairs", "--task=axpy", "--kernels=16"}), deps())
  for _, r in ipairs(rows(out)) do
    t.contains(r.completion, "axpy(")
    t.contains(r.prompt, "axpy(")
    t.ok(r.speedup >= 1.2)
  end
  -- an experiment 1 run at the same size: its verified samples are paired too
  local earlier = t.tmpdir()
  exp1.run(primitives.parse(exp1, "experiment1", {"--out=" .. earlier, "--profile=paper", "--G=4", "--steps=2",
                                                  "--prompts_per_step=2", "--size=32", "--opt=O3", "--beta=0.0",
                                                  "--lr=0.0"}), fakes.deps())
  local from = t.tmpdir()
  kc.run(parse(from, {"--phases=pairs", "--kernels=0", "--from=" .. earlier}), deps())
  local summary = json.read(from .. "/pairs.json")
  t.eq(summary.earlier.runs, 1)
  t.ok(summary.earlier.samples > 0)
  for _, r in ipairs(rows(from)) do
    t.ok(r.slow.source:find(earlier, 1, true) == 1 and r.fast.source:find(earlier, 1, true) == 1, r.slow.source)
    t.ok(r.speedup >= 1.2)
  end
  -- a run of another size is left out
  local other = t.tmpdir()
  t.raises(function() kc.run(parse(other, {"--phases=pairs", "--kernels=0", "--size=48", "--from=" .. earlier}), deps()) end,
           "no pairs")
end)

t.test("sft: the SFT trainer gets the pairs, resumes from its checkpoint, exports a model directory", function()
  local out = t.tmpdir()
  kc.run(parse(out, {"--phases=pairs"}), deps())
  -- an uninterrupted SFT
  local d = deps()
  t.eq(kc.run(parse(out, {"--phases=sft"}), d).sft, "done")
  t.eq(#d.train.sft_trainers, 1)
  t.eq(#d.train.trainers, 0, "no GRPO trainer")
  local trainer = d.train.sft_trainers[1]
  t.eq(trainer.opts, {lr = 1e-4, seed = 1}, "a full fine-tune at --sft_lr")
  t.eq(trainer.batches, {4, 4, 4})
  local by_prompt = {}
  for _, r in ipairs(rows(out)) do by_prompt[r.prompt] = r.completion end
  for _, e in ipairs(trainer.examples) do t.eq(e.completion, by_prompt[e.prompt], "an example is a pair") end
  t.ok(sys.exists(out .. "/sft_model/config.json"), "the model directory")
  local mark = json.read(out .. "/sft_model/sft.json")
  t.ok(mark.complete)
  t.eq({mark.figures.steps, mark.figures.first_loss, mark.figures.last_loss}, {3, 1.0, 0.5})
  t.contains(t.read(out .. "/sft_model/README.md"), "3 steps of 4 pairs")
  t.eq(kc.run(parse(out, {"--phases=sft"}), deps()).sft, "complete")

  -- stopped at step 3 (after the checkpoint of step 2), then run again: step 3 alone,
  -- on the batch an uninterrupted run trains on
  local cut = t.tmpdir()
  kc.run(parse(cut, {"--phases=pairs"}), deps())
  local d1 = deps()
  local sft = d1.train.sft
  d1.train.sft = function(pol, o)
    local tr = sft(pol, o)
    local step = tr.step
    function tr:step(examples)
      if self.done == 2 then error("stopped at step 3") end
      return step(self, examples)
    end
    return tr
  end
  t.raises(function() kc.run(parse(cut, {"--phases=sft"}), d1) end, "stopped at step 3")
  t.ok(not sys.exists(cut .. "/sft_model/sft.json"))
  local d2 = deps()
  t.eq(kc.run(parse(cut, {"--phases=sft"}), d2).sft, "done")
  local resumed = d2.train.sft_trainers[1]
  t.eq(resumed.batches, {4}, "one step left")
  t.eq(resumed.examples, table.move(trainer.examples, 9, 12, 1, {}))
  -- other SFT options are refused, named
  t.raises(function() kc.run(parse(out, {"--phases=sft", "--sft_lr=2e-4"}), deps()) end, "lr")
end)

-- Which GRPO trainer updates to fail on, counted over a whole run.
local function failing_grpo(d, at)
  local grpo, updates = d.train.grpo, 0
  d.train.grpo = function(pol, o)
    local tr = grpo(pol, o)
    local step = tr.step
    function tr:step(groups)
      updates = updates + 1
      if updates == at then error("the trainer failed") end
      return step(self, groups)
    end
    return tr
  end
end

t.test("the whole pipeline: stopped in the grpo phase, run again, it continues to the report", function()
  local out = t.tmpdir()
  local d1 = deps()
  failing_grpo(d1, 3)  -- the second learning run's first update
  t.raises(function() kc.run(parse(out, {"--seeds=2"}), d1) end, "the trainer failed")
  t.eq(#d1.train.sft_trainers, 1)
  local pairs_before = t.read(out .. "/pairs.jsonl")

  local d2 = deps()
  local outcome = kc.run(parse(out, {"--seeds=2"}), d2)
  t.eq(outcome.pairs, "complete")
  t.eq(outcome.sft, "complete")
  t.eq(outcome.grpo, "grpo done, sft_grpo done")
  t.eq(outcome.heldout, "heldout_grpo.json done, heldout_sft_grpo.json done")
  t.eq(#d2.train.sft_trainers, 0, "the SFT was not made again")
  t.eq(t.read(out .. "/pairs.jsonl"), pairs_before)

  -- the four kinds of runs, each with the KernelCompare reward, from its model
  for _, s in ipairs{{"grpo", "fake-model"}, {"sft_grpo", out .. "/sft_model"}} do
    for _, lr in ipairs{"0", "0.0003"} do
      for seed = 1, 2 do
        local dir = string.format("%s/%s/beta=0,lr=%s,opt=O3,seed=%d", out, s[1], lr, seed)
        local config = json.read(dir .. "/config.json")
        t.eq(config.reward, "kernelcompare", dir)
        t.eq(config.model, s[2], dir)
        t.eq(config.experiment, "experiment1")
        local run = store.open(dir, {read_only = true})
        t.eq(run:get("step"), 2, dir)
        t.ok(type(run:get("baseline_gflops")) == "number", "the naive kernel measured")
        for _, sample in ipairs(run:samples{}) do
          t.ok(sample.reward == 0 or sample.reward == 0.4 or sample.reward == 0.8 or sample.reward == 1.0,
               sample.reward)
        end
        run:close()
      end
    end
  end

  -- the held-out comparisons: the same prompts and sampling seeds in both
  local a, b = json.read(out .. "/heldout_grpo.json"), json.read(out .. "/heldout_sft_grpo.json")
  t.ok(a.complete and b.complete)
  t.eq(#a.seeds, 2)
  t.eq(#b.seeds, 2)
  for i = 1, 2 do
    t.eq(#a.seeds[i].prompts, #b.seeds[i].prompts)
    for j, p in ipairs(a.seeds[i].prompts) do
      t.eq({p.part, p.task, p.size, p.sample_seed},
           {b.seeds[i].prompts[j].part, b.seeds[i].prompts[j].task, b.seeds[i].prompts[j].size,
            b.seeds[i].prompts[j].sample_seed})
    end
  end

  -- the stand-in SFT model writes faster kernels than the base model: SFT only - base > 0
  for i = 1, 2 do
    t.eq(a.seeds[i].seed, b.seeds[i].seed)
    t.ok(b.seeds[i].overall.base.roofline > a.seeds[i].overall.base.roofline, "seed " .. i)
  end

  local report = t.read(out .. "/report.md")
  for _, name in ipairs{"| base model |", "| SFT only |", "| GRPO only |", "| SFT then GRPO |",
                        "| SFT only − base model | overall | roofline score",
                        "| GRPO only − base model | overall | verified share",
                        "| SFT then GRPO − base model | wordings |", "timed in separate batches",
                        "sizes: roofline score (%)", "**Pairs** (`pairs.jsonl`)", "loss 1.0000 at step 1, 0.5000 at step 3"} do
    t.contains(report, name)
  end
  t.contains(report, "### `beta=0,lr=0.0003,opt=O3`")

  -- a third time: every phase complete, nothing sampled or trained
  local d3 = deps()
  local again = kc.run(parse(out, {"--seeds=2"}), d3)
  t.eq({again.pairs, again.sft, again.grpo, again.heldout},
       {"complete", "complete", "grpo complete, sft_grpo complete",
        "heldout_grpo.json complete, heldout_sft_grpo.json complete"})
  t.eq(d3.policy.samples, 0)
  t.eq(t.read(out .. "/report.md"), report)
end)

t.test("the GRPO-only sweep starts from the base model, the default one too", function()
  local out = t.tmpdir()
  local given = kc.sweep_opts(parse(out, {"--model=some/base"}), "grpo")
  t.eq(given.model, "some/base")
  t.eq(kc.sweep_opts(parse(out, {"--model=some/base"}), "sft_grpo").model, out .. "/sft_model")
  local default = parse(out)
  default.model = nil  -- as without --model: the engine's default model
  t.eq(kc.sweep_opts(default, "grpo").model, nil, "not the SFT model")
  t.eq(kc.sweep_opts(default, "sft_grpo").model, out .. "/sft_model")
end)

t.test("bad options are refused, naming the option", function()
  local function try(list)
    local argv = {[0] = "kernelcompare.lua", "--model=m"}
    for _, a in ipairs(list) do argv[#argv + 1] = a end
    local opts, err = args.try_parse(argv, kc.spec)
    t.eq(opts, nil)
    return err
  end
  t.contains(try{"--min_speedup=0.9"}, "--min_speedup must be at least 1")
  t.contains(try{"--phases=pairs,train"}, "--phases: 'train' is not one of: pairs, sft, grpo, heldout, report")
  t.contains(try{"--lr=3e-4"}, "--lr must hold 0 and at least one value above 0")
  t.contains(try{"--sft_steps=0"}, "--sft_steps")
  local out = t.tmpdir()
  local empty = t.tmpdir()
  local function user_error(list, part)
    local ok, err = pcall(kc.run, parse(out, list), deps())
    t.ok(not ok and cli.is_user_error(err), tostring(err))
    t.contains(tostring(err), part)
  end
  user_error({"--phases=pairs", "--from=" .. empty}, "--from=" .. empty .. ": no runs there")
  user_error({"--phases=pairs", "--from=" .. empty .. "/missing"}, "no such directory")
  user_error({"--phases=sft"}, "--phases: the sft phase needs the pairs")
  user_error({"--phases=heldout"}, "--phases: the heldout phase needs finished GRPO runs")
  user_error({"--phases=pairs", "--tasks=axpy,dot"}, "--tasks")
  user_error({"--heldout_tasks=matmul"}, "--heldout_tasks: 'matmul' is not a held-out task")
  user_error({"--heldout_size=32"}, "--heldout_size=32 is --size")
  t.eq(sys.listdir(out), {}, "nothing was made")
end)

t.run()
