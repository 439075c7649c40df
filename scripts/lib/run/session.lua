-- A session: the policy, its trainer and the run of one configuration, and the phases a
-- work item of runs.pipeline goes through on it (sample, judge, re-measure, update,
-- commit). Both experiments get theirs from runs.with_run, which calls session.new.
--
--   local s = session.new(run, opts, config, deps, pol)
--   local item = s:item({step = 3}, texts, completions, sample_s)
--   s:start_item(item, stage, async); s:collect_item(item, scheme, ctx, async)
--   local records = s:commit({item}, {describe = ..., store = ..., mark = ...}, since)

local checks = require "run.checks"
local cli = require "core.cli"
local controls = require "method.controls"
local cuda_eval = require "method.cuda_eval"
local evaluate = require "method.evaluate"
local metrics = require "method.metrics"
local prompts = require "method.prompts"
local reward = require "method.reward"
local wiring = require "method.wiring"

local session = {}

local Session = {}
Session.__index = Session
session.Session = Session  -- for scripts and tests that build their own sessions

-- opts: the parsed options; config: {lr =, beta =, opt = ...}; deps: wiring.deps();
-- pol: the policy when the caller loaded it already (wiring.load_policy, before it
-- opened the run, so that a bad model leaves no run directory).
function session.new(run, opts, config, deps, pol)
  local self = setmetatable({run = run, opts = opts, config = config, deps = deps}, Session)
  if pol then
    self.policy, self.model = pol, wiring.model_dir(opts, deps)
  else
    self.policy, self.model = wiring.load_policy(opts, deps)
  end
  self.learns = (config.lr or 0) > 0
  if self.learns then
    self.trainer = deps.train.grpo(self.policy, wiring.train_opts(opts, config))
    local updates = run:get("updates", 0)
    if updates > 0 then self:restore(updates) end
  end
  -- The run's tasks: one, or a mixture (--tasks), each with its prompts' task and its
  -- benchmark options; self.task and self.bench_opts are the first's.
  self.task_names = wiring.task_names(opts)
  self.mixture = opts.task_list ~= nil
  self.tasks, self.bench_opts_of = {}, {}
  for _, name in ipairs(self.task_names) do
    self.tasks[name] = self.mixture and wiring.task_for(opts, config, name) or wiring.task(opts, config)
    self.bench_opts_of[name] = self.mixture and wiring.bench_opts_for(opts, config, name)
                               or wiring.bench_opts(opts, config)
  end
  self.task = self.tasks[self.task_names[1]]
  self.bench_opts = self.bench_opts_of[self.task_names[1]]
  if self.task.cuda then return self:open_cuda() end
  if deps.bench.machine and run:get("machine") == nil then
    local machine, nodes = checks.measuring_machine(deps)
    run:set("machine", machine)
    if nodes then run:set("nodes", nodes) end
  end
  if deps.bench.reference then
    if self.mixture and run:get("references") == nil then self:measure_references()
    elseif not self.mixture and run:get("reference") == nil then self:measure_reference() end
  end
  if deps.bench.evaluate and run:get("control") == nil then self:measure_control() end
  return self
end

-- A CUDA task (--task=cuda:NAME): its kernels judged on the GPU by cuda_eval's stand-in
-- for the benchmark. Its yardstick (libtorch's op) is timed once per sweep and GPU, as the
-- CPU tasks' are (OUT/yardsticks.json: libtorch's median call moved 12% between two runs'
-- own measurements on an H100), and kept in the run so that a resumed run rewards on the
-- same scale; the GPU's record beside it.
function Session:open_cuda()
  local run, what, task, size = self.run, "--task=" .. self.task.name, self.task.cuda, self.task.size
  local gpu, why = cuda_eval.gpu(self.deps.bench)
  if not gpu then cli.fail(what .. ": " .. why) end
  local stored = run:get("cuda_yardstick")
  local y = stored or self:shared_record({cuda = task, size = size, gpu = gpu.device},
    function() return cli.try(what, cuda_eval.yardstick, self.deps.bench, task, size) end)
  -- --warmup and --runs when given; else the judge's own (2 and 20: GPU calls are short)
  local given = self.opts._given or {}
  local b = cli.try(what, cuda_eval.bench, self.deps.bench, task, size,
                    {gpu = gpu, yardstick = y, warmup = given.warmup and self.opts.warmup or nil,
                     calls = given.runs and self.opts.runs or nil, warm = self.opts.cuda_child == "warm"})
  self.deps = setmetatable({bench = b}, {__index = self.deps})
  self.task.gpu = gpu.device
  if not stored then run:set("cuda_yardstick", y) end
  if run:get("gpu") == nil then run:set("gpu", gpu) end
  log.info("CUDA task", {task = b.task, size = b.size, gpu = b.gpu.device,
                         libtorch_ms = string.format("%.4f", b.yardstick.median_ms)})
  return self
end

-- The node's timing noise, measured once when the run starts: a fixed control kernel
-- evaluated again and again with the run's options (controls.lua). The report shows it
-- and warns above controls.bound.
function Session:measure_control()
  local c, why = controls.measure(self.deps.bench, self.bench_opts, nil,
                                  self.task.name and prompts.seed(self.task) or nil)
  if not c then
    log.warn("the control kernel could not be measured: the report will not show the timing noise",
             {why = why})
    return
  end
  self.run:set("control", c)
  if controls.noisy(c) then
    log.warn("timing noise on this node is above the bound: kernels closer than about twice it "
             .. "are not told apart", {cov = string.format("%.1f%%", 100 * c.cov),
                                       bound = string.format("%.0f%%", 100 * controls.bound)})
  end
end

-- OpenBLAS on the run's problem, measured once when the run starts (its fastest thread
-- count unless --threads fixes one): the yardstick the report sets the kernels against.
-- One task's yardstick as the run records it; nil (and a warning) when it fails.
function Session:yardstick(b)
  local problem = b.problem
  if problem.M then  -- matmul: OpenBLAS and the yardsticks its spec adds
    problem = require("engine.tasks").resolve{task = "matmul", size = {M = problem.M, N = problem.N, K = problem.K},
                                              c_init = problem.c_init}
  end
  local r = self.deps.bench.reference{problem = problem, threads = b.threads, verify = b.verify}
  if r.status ~= "ok" then
    log.warn("the yardstick could not be measured: the report will not compare against it",
             {problem = problem.task or "matmul", status = r.status, message = r.message})
    return nil
  end
  -- gflops is the task's FLOPs over the fastest call: the median call's from the same FLOPs
  return {gflops = r.gflops, gbps = r.gbps, best = r.gflops, median = r.gflops * r.min / r.median,
          threads = r.options.threads, calls = #r.times, library = r.library, version = r.version}
end

-- A value's text with its keys sorted, so that one problem always gives one key.
local function canonical(v)
  if type(v) ~= "table" then return type(v) == "string" and string.format("%q", v) or tostring(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canonical(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- The sweep's yardsticks, one per problem and thread count, kept in OUT/yardsticks.json.
-- A sweep measures each once and every configuration (and a resumed one) divides by that
-- measurement: two measurements of one library on a noisy node differ by 10-30%, which
-- would otherwise enter the "x reference" of one kernel in two configurations.
session.yardsticks_file = "yardsticks.json"

local function read_yardsticks(path)
  if not sys.exists(path) then return {} end
  local ok, all = pcall(json.read, path)
  if not ok or type(all) ~= "table" then
    cli.fail(path .. " is not the sweep's yardsticks (" .. tostring(all) .. "): remove it to measure them again")
  end
  return all
end

function Session:shared_yardstick(b)
  return self:shared_record({problem = b.problem, threads = b.threads or false}, function() return self:yardstick(b) end)
end

-- The sweep's record under `key` (a table) in OUT/yardsticks.json: the one stored, else
-- measure()'s (nil: not stored), written for the sweep's other configurations.
function Session:shared_record(key, measure)
  local out = self.opts.out
  if not out then return measure() end
  local path = out .. "/" .. session.yardsticks_file
  key = canonical(key)
  local all = read_yardsticks(path)
  if all[key] then return all[key] end
  local rec = measure()
  if not rec then return nil end
  rec.shared, rec.measured_by = session.yardsticks_file, (self.run:dir():match("([^/]+)/*$"))
  all = read_yardsticks(path)  -- another engine of the sweep may have written one meanwhile
  if all[key] then return all[key] end
  all[key] = rec
  local tmp = path .. ".tmp"
  json.write(tmp, all)
  assert(os.rename(tmp, path))
  return rec
end

function Session:measure_reference()
  local rec = self:shared_yardstick(self.bench_opts)
  if rec then self.run:set("reference", rec) end
end

-- A mixture's yardsticks, one per task, for the report.
function Session:measure_references()
  local all = {}
  for _, name in ipairs(self.task_names) do all[name] = self:shared_yardstick(self.bench_opts_of[name]) or false end
  self.run:set("references", all)
end

-- The speed a kernel must beat under --reward=kernelcompare: the naive seed kernel's, in
-- the task's unit, measured once per run and kept in the run store.
function Session:baseline_speed()
  local stored = self.run:get("baseline_gflops")
  if stored then return stored end
  local seed = self:judge({{text = prompts.seed(self.task), whole = true}}, nil, "gflops")[1]
  local speed = seed.status == "ok" and reward.speed(seed) or 0
  self.run:set("baseline_gflops", speed)
  return speed
end

-- What bounds a task's speed on the measuring machine (its roofline): the memory
-- bandwidth for a memory-bound task, else the FP64 peak of the threads a kernel runs on;
-- both measured (bench.machine()). Nil where the machine record has no measurement.
function Session:roofline(name)
  return wiring.roofline(self.run:get("machine"), name, self.opts.threads)
end

-- In a mixture, a kernel's speed as a percentage of its task's roofline (GB/s against the
-- bandwidth, GFLOPS against the peak), so that every task's rewards have one scale: the
-- machine's limits, which no task's weak or strong yardstick moves.
function Session:scale_speed(r, name)
  if r.status ~= "ok" then return end
  self.rooflines = self.rooflines or {}  -- once per task: the machine record is the run's
  if self.rooflines[name] == nil then self.rooflines[name] = self:roofline(name) or false end
  local limit = self.rooflines[name]
  if limit and limit > 0 then r.speed, r.unit = 100 * reward.speed(r) / limit, "% of the roofline" end
end

function Session:restore(updates)
  local name = "update-" .. updates
  local last_saved = self.run:get("checkpoint")
  if last_saved ~= name then
    log.warn("the last checkpoint is older than the last update: the updates after it are "
             .. "lost (use --checkpoint_every=1 for an exact resume)",
             {checkpoint = last_saved or "none", updates = updates})
    if not last_saved then return end
    name = last_saved
  end
  local path = self.run:checkpoint_path(name)
  cli.try(string.format("cannot resume %s from its checkpoint %s", self.run:dir(), path),
                 self.trainer.load, self.trainer, path)
  log.info("restored the trainer", {checkpoint = name})
end

-- With --prefill, the beginning of the answer a prompt of task `name` (nil: the run's
-- first) ends with, which the judge reads before the completion; "" without.
function Session:answer_start(name)
  if not self.opts.prefill then return "" end
  return prompts.answer_start(name or self.task_names[1])
end

-- What is judged of a group's completions: each one's text after its prompt's given
-- beginning, but a whole kernel's (`whole`: the seed kernel, which no prompt began) as it is.
function Session:judged_texts(completions, name)
  local begun, texts = self:answer_start(name), {}
  for i, c in ipairs(completions) do
    if type(c) == "string" then texts[i] = begun .. c
    else texts[i] = (c.whole and "" or begun) .. c.text end
  end
  return texts
end

-- Samples G completions for each prompt (lists of chat messages; group_tasks[i] the task of
-- prompt i in a mixture). Returns the rendered prompt texts and, per prompt, the list of
-- completions.
function Session:sample(message_lists, seed, group_tasks)
  local texts = {}
  for i, msgs in ipairs(message_lists) do
    if self.opts.template == "model" then
      if not self.policy.chat then cli.fail("--template=model: the policy has no chat method") end
      texts[i] = self.policy:chat(msgs)
    else
      texts[i] = prompts.render(msgs)
    end
    texts[i] = texts[i] .. self:answer_start(group_tasks and group_tasks[i])
  end
  local out = self.policy:sample(texts, wiring.sample_opts(self.opts, seed))
  if #out ~= #texts then
    error(string.format("policy:sample returned %d groups for %d prompts", #out, #texts))
  end
  return texts, out
end

-- Judges one group's completions at a stage (nil: no stage rules) and rewards them; in a
-- mixture, as kernels of `task`.
function Session:judge(completions, stage, scheme, ctx, task)
  local group_tasks = self.mixture and {task or self.task_names[1]} or nil
  local results, rewards = self:finish_judging(self:start_judging({completions}, stage, nil, group_tasks), scheme, ctx)
  return results[1], rewards[1]
end

-- Starts judging groups of completions (lists, one per prompt) as one batch, which the
-- benchmark workers share by load. With `background` the benchmark runs while the
-- caller goes on (bench.submit_batch). Returns a handle for Session:finish_judging.
function Session:start_judging(groups, stage, background, group_tasks)
  if group_tasks then return self:start_judging_mixture(groups, stage, background, group_tasks) end
  local flat, sizes = {}, {}
  for g, completions in ipairs(groups) do
    sizes[g] = #completions
    for _, text in ipairs(self:judged_texts(completions)) do flat[#flat + 1] = text end
  end
  local pending = evaluate.start(flat, {
    bench = self.deps.bench, bench_opts = self.bench_opts, stage = stage, background = background,
    task = not self.task.cuda and self.task.name or nil,
    cuda = self.task.cuda and require("engine.cuda_tasks").get(self.task.cuda) or nil,
    detector = self.opts.detector ~= "" and self.opts.detector or nil})
  return {sizes = sizes, pending = pending}
end

-- A mixture's groups, each its task's (group_tasks[g]): one evaluation per task, with its
-- problem, its signature and its stage ladder.
function Session:start_judging_mixture(groups, stage, background, group_tasks)
  local parts, by_name = {}, {}
  for g, completions in ipairs(groups) do
    local name = group_tasks[g]
    local part = by_name[name]
    if not part then
      part = {name = name, groups = {}, sizes = {}, flat = {}}
      by_name[name], parts[#parts + 1] = part, part
    end
    part.groups[#part.groups + 1], part.sizes[#part.sizes + 1] = g, #completions
    for _, text in ipairs(self:judged_texts(completions, name)) do part.flat[#part.flat + 1] = text end
  end
  for _, part in ipairs(parts) do
    part.pending = evaluate.start(part.flat, {
      bench = self.deps.bench, bench_opts = self.bench_opts_of[part.name], stage = stage, background = background,
      task = part.name ~= "matmul" and part.name or nil,
      detector = self.opts.detector ~= "" and self.opts.detector or nil})
    part.flat = nil
  end
  return {parts = parts}
end

local function reward_group(rs, scheme, ctx)
  local rw = reward.scheme(scheme)(rs, ctx)
  for i, r in ipairs(rs) do r.reward = rw[i] end
  return rw
end

-- Waits for the judgement and rewards each group on its own (the rewards are relative
-- within a group). Returns, per group, the results and the rewards.
function Session:finish_judging(handle, scheme, ctx)
  if handle.parts then
    local results, rewards = {}, {}
    for _, part in ipairs(handle.parts) do
      local flat, at = part.pending:finish(), 0
      for i, g in ipairs(part.groups) do
        local rs = table.move(flat, at + 1, at + part.sizes[i], 1, {})
        at = at + part.sizes[i]
        for _, r in ipairs(rs) do
          r.task = part.name
          self:scale_speed(r, part.name)
        end
        results[g], rewards[g] = rs, reward_group(rs, scheme, ctx)
      end
    end
    return results, rewards
  end
  local flat = handle.pending:finish()
  local results, rewards, at = {}, {}, 0
  for g, n in ipairs(handle.sizes) do
    local rs = table.move(flat, at + 1, at + n, 1, {})
    at = at + n
    local rw = reward.scheme(scheme)(rs, ctx)
    for i, r in ipairs(rs) do r.reward = rw[i] end
    results[g], rewards[g] = rs, rw
  end
  return results, rewards
end

-- Re-measures the best successful kernel among results in an independent second
-- evaluation: its `confirmed_gflops` is the lower of the two figures (0 when the second
-- evaluation fails), and only confirmed figures become a run's best (the progress line's
-- max, Table II, best_kernel.c). The rewards keep the first measurement.
function Session:confirm_best(results)
  return self:start_confirm(results):finish()
end

local Confirmation = {}
Confirmation.__index = Confirmation

-- Session:confirm_best in two halves: the second evaluation starts now (in the
-- background with `background`), :finish() waits for it and returns the best result.
function Session:start_confirm(results, background)
  local top
  for _, r in ipairs(results) do  -- a mixture's by its share of its yardstick
    if r.status == "ok" and (top == nil or reward.speed(r) > reward.speed(top)) then top = r end
  end
  local c = setmetatable({top = top}, Confirmation)
  if not top then return c end
  local benchmark = self.deps.bench
  local b = top.task and self.bench_opts_of[top.task] or self.bench_opts
  if background and benchmark.submit_batch then
    c.batch = benchmark.submit_batch({top.code}, b)
  else
    c.again = benchmark.evaluate_batch({top.code}, b)[1]
  end
  return c
end

function Confirmation:finish()
  local top = self.top
  if not top or top.second then return top end
  local again = self.again or self.batch:wait()[1]
  top.second = {status = again.status, gflops = again.gflops}
  top.confirmed_gflops = again.status == "ok" and math.min(top.gflops, again.gflops) or 0
  return top
end

-- One GRPO update over groups ({prompt =, completions =, rewards =}); nil when lr = 0
-- (the baseline samples and evaluates, and never changes the policy).
function Session:update(groups)
  if not self.learns then return nil end
  return self.trainer:step(groups)
end

-- Saves the trainer as checkpoint "update-N" inside the caller's transaction, so the
-- checkpoint and the step's records commit together. Call after update().
function Session:checkpoint(updates)
  if not self.learns then return end
  local every = self.opts.checkpoint_every
  if every <= 0 or updates % every ~= 0 then return end
  local name = "update-" .. updates
  local staging = self.run:begin_checkpoint(name)
  self.trainer:save(staging)
  self.run:commit_checkpoint(name)
  self.run:set("checkpoint", name)
end

-- Stores one group's samples. fields: iteration, stage, parent_id, extra (merged).
-- The group's prompt is stored with its first sample only (it is the same for all).
function Session:record(prompt, completions, results, fields)
  local ids = {}
  for i, r in ipairs(results) do
    local extra = {message = r.message, reason = r.reason, techniques = r.techniques,
                   finish_reason = completions[i].finish_reason, backend = r.backend,
                   max_rel_error = r.max_rel_error, features = r.features, node = r.node,
                   confirmed_gflops = r.confirmed_gflops, second = r.second, task = r.task,
                   speed = r.unit and r.speed or nil, unit = r.unit,
                   gbps = r.vs_yardstick and r.gbps or nil,  -- a CUDA task's rate beside its ratio
                   -- measured once for several kernels of the step's batch (evaluate.lua)
                   shared = r.shared, shared_with = r.shared_with,
                   -- what a CUDA kernel printed (its first 4 KiB): kept, never shown
                   kernel_output = r.kernel_output}
    for k, v in pairs(fields.extra or {}) do extra[k] = v end
    ids[i] = self.run:add_sample{
      iteration = fields.iteration, stage = fields.stage, parent_id = fields.parent_id,
      prompt = i == 1 and prompt or "", completion = r.completion or "", code = r.code or "",
      status = r.status, reward = r.reward, gflops = r.gflops,
      timings = {times = r.times, compile_ms = r.compile_ms, median = r.median, min = r.min},
      config_id = fields.config_id, extra = extra}
  end
  return ids
end

---------------------------------------------------------------------------------------
-- Work items: what runs.pipeline moves through its phases. An item holds, per
-- group, the rendered prompt (texts) and the completions; the phases below add the
-- judgement, the rewards and the re-measurement, and Session:commit trains on items and
-- stores them. Experiment 1's item is a step (its prompts' groups), experiment 2's one
-- SQD group.
---------------------------------------------------------------------------------------

-- The item of sampled groups, and what it needs to know later: when it was sampled (for
-- its seconds) and how many updates the policy had then (for its staleness).
function Session:item(fields, texts, completions, sample_s)
  local item = {texts = texts, completions = completions, sample_s = sample_s,
                updates = self.run:get("updates", 0)}
  for k, v in pairs(fields) do item[k] = v end
  return item
end

-- Starts judging the item's groups at a stage (nil: no stage rules); in the background
-- with `async` (without it this is the whole evaluation).
function Session:start_item(item, stage, async)
  local t0 = sys.now()
  item.judging = self:start_judging(item.completions, stage, async, item.group_tasks)
  item.start_s = sys.now() - t0
end

-- Waits for the judgement, rewards each group, and starts re-measuring the item's best
-- kernel.
function Session:collect_item(item, scheme, ctx, async)
  local t0 = sys.now()
  item.results, item.rewards = self:finish_judging(item.judging, scheme, ctx)
  item.all = {}
  for _, rs in ipairs(item.results) do
    for _, r in ipairs(rs) do item.all[#item.all + 1] = r end
  end
  item.confirm = self:start_confirm(item.all, async)
  item.wait_s = sys.now() - t0
end

-- One GRPO update over the groups of `items` (none when lr = 0), their re-measurements,
-- then one transaction: each item's samples (how.store(item)), the update's checkpoint,
-- a metrics record per item (how.describe(item, record) adds its own fields), and the
-- resume point (how.mark(item) for the last). The update and the wait for the
-- re-measurements are the last item's seconds. Returns the records.
function Session:commit(items, how, since)
  local groups = {}
  for _, item in ipairs(items) do
    for g, completions in ipairs(item.completions) do  -- they carry their prompt
      groups[#groups + 1] = {completions = completions, rewards = item.rewards[g]}
    end
  end
  local t0 = sys.now()
  local stats = self:update(groups)
  local t1 = sys.now()
  for _, item in ipairs(items) do item.confirm:finish() end
  local now = sys.now()

  local run, records = self.run, {}
  for i, item in ipairs(items) do
    local last = i == #items
    local record = metrics.summary(item.all)
    record.seconds = {sample = item.sample_s, evaluate = item.start_s + item.wait_s + (last and now - t1 or 0),
                      update = last and t1 - t0 or 0, wall = last and now - since or 0}
    record.staleness = run:get("updates", 0) - item.updates  -- updates since it was sampled
    if stats and last then record.kl, record.loss, record.train = stats.kl, stats.loss, stats end
    how.describe(item, record)
    records[i] = record
  end
  run:atomic(function()
    for _, item in ipairs(items) do how.store(item) end
    if stats then
      local updates = run:get("updates", 0) + 1
      self:checkpoint(updates)
      run:set("updates", updates)
    end
    for _, record in ipairs(records) do run:log(record) end
    how.mark(items[#items])
  end)
  return records
end

return session
