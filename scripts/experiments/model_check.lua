-- What a policy writes for one prompt: samples a group of kernels, benchmarks them and
-- reports how many compile and pass verification, which technique combinations they use
-- and how repetitive the texts are. The figures of docs/results.md come from here.
--
--   engine model_check.lua                          # the default model, stage 6, 64 kernels
--   engine model_check.lua --model=DIR --prompt=fixed --n=128 --json=check.json
--   engine model_check.lua --task=axpy --n=16            # another task of the suite
--   ENGINE_TARGET=x86-64-v3 engine model_check.lua   # as on a machine without AVX-512
--   engine model_check.lua --split=all --n=16 --model=DIR   # every task, per split
--   engine model_check.lua --split=user --task_dir=mytasks   # the tasks of a folder
--   engine model_check.lua --split=train --kernels=k.jsonl      # every kernel's text and verdict
--   engine model_check.lua --split=wordings --rename_entry      # the name set aside (a diagnostic)
--   engine model_check.lua --split=wordings --prefill           # the answer begun with the prototype
--   engine model_check.lua --split=wordings --wordings=first     # each task's first wording only
--
-- --split asks every task of a split its first fixed prompt (the wordings split: the
-- training tasks in each held-out wording in turn, or with --wordings=first in their
-- first) and reports per task and split the verified share, the roofline score (each
-- kernel's speed as a percentage of its task's roofline on this machine, 0 for a kernel
-- that fails) and the share of format violations; per split also its compile errors and how
-- many stop on an undeclared name; the wordings split also per wording; and
-- for a task some of whose kernels do not define the asked function, what they define instead.
--
-- The prompt names the machine's vector ISA (--isa=auto) or the one --isa forces; the
-- figures count the kernels whose vectors that ISA lacks (beyond_isa: they cannot
-- compile there).

local args = require "engine.args"
local tasks = require "engine.tasks"
local cli = require "core.cli"
local evaluate = require "method.evaluate"
local metrics = require "method.metrics"
local options = require "run.options"
local prompts = require "method.prompts"
local stages = require "method.stages"
local wiring = require "method.wiring"

local M = {}

M.spec = {
  description = "Samples kernels from a policy for one prompt and reports compile and "
    .. "verification rates, technique combinations and text diversity.",
  options = {
    {"model", nil, "policy checkpoint [default: " .. wiring.default_model .. "]",
     type = "string"},
    {"prompt", "write", "which prompt: write (SQD's fresh kernel at --stage) or fixed "
     .. "(Experiment 1's first fixed prompt)", choices = {"write", "fixed"}},
    {"stage", 6, "stage of the write prompt (at most the task's last)", min = 1, max = stages.count},
    {"n", 64, "kernels to sample", min = 1},
    {"temperature", 1.0, "sampling temperature", min = 0},
    {"max_tokens", 1024, "longest completion in tokens", min = 1},
    {"size", 128, "matrix size of matmul: M = N = K", min = 1},
    {"task", "matmul", "the task of the suite (bench.tasks())"},
    {"task_size", "", "the named size of --task (empty: train)"},
    {"task_dir", "", "a folder of task specs added to the suite's"},
    {"opt", "O3", "compiler level", choices = {"O0", "O1", "O2", "O3"}},
    {"threads", 0, "threads per kernel (0: all cores)", min = 0},
    {"timeout", 2.0, "seconds a kernel may run", above = 0},
    {"warmup", 1, "untimed runs before timing", min = 0},
    {"runs", 2, "timed runs per kernel", min = 1},
    options.verify_option,
    {"device", "auto", "where the policy runs: auto (CUDA when present, else cpu), cpu, cuda, "
     .. "cuda:N", check = options.check_device},
    {"seed", 1, "sampling seed"},
    {"isa", "auto", "vector ISA the prompt asks for: auto (the machine's, bench.machine().simd), "
     .. "avx512 (the paper's prompts) or avx2", choices = {"auto", "avx512", "avx2"}},
    {"split", "", "instead of --task, every task of a split: train (the suite's training tasks "
     .. "and matmul), heldout (the held-out tasks), wordings (the training tasks in a held-out "
     .. "wording), user (the tasks of --task_dir), all (train, heldout and wordings)",
     choices = {"", "train", "heldout", "wordings", "user", "all"}},
    {"rename_entry", false, "diagnostic, not the protocol's figures: the first function a "
     .. "completion defines is renamed to the task's before judging (tells a model that writes "
     .. "the computation under another name from one that cannot write it)"},
    {"prefill", false, "diagnostic, not the protocol's figures: the answer begun for the model "
     .. "with a code fence, the usual headers and the task's prototype line, so that it writes "
     .. "only the body (what it writes when the name is not its to write); judged with that beginning"},
    {"wordings", "each", "the held-out wordings the wordings split asks: each (the samples spread "
     .. "evenly over all of them, in turn; --n a multiple of their count) or first (each task's "
     .. "first wording only, one framing sentence of four: docs/models.md's figures before the "
     .. "eighth universe model)", choices = {"each", "first"}},
    {"json", nil, "also write the figures to this file", type = "string"},
    {"kernels", nil, "also write every judged kernel to this file, a JSON line each: split, task, "
     .. "prompt, index, status, message and the completion (why a model loses, kernel by kernel)",
     type = "string"},
    cli.debug_option,
  },
}

local compiled_statuses = {ok = true, verification_error = true, runtime_error = true,
                           timeout = true, rejected = true}

-- Whether a compile error's first error names an identifier the kernel never declared:
-- a body that lost track of its own names (a block size defined as BJ and used as BS),
-- rather than a malformed one.
function M.undeclared(message)
  local first = (message or ""):match("error: ([^\n]*)")
  return first ~= nil and first:find("undeclared", 1, true) ~= nil
end

-- The figures of one group of judged kernels, written for `isa` (a key of stages.isas;
-- nil: the paper's AVX-512).
function M.figures(results, isa)
  local n = #results
  local compiled, verified, combos, texts, counts = 0, 0, {}, {}, {}
  local verified_combos, best, beyond, undeclared = {}, nil, 0, 0
  local width = stages.isa(isa).width
  for _, r in ipairs(results) do
    counts[r.status] = (counts[r.status] or 0) + 1
    if compiled_statuses[r.status] then compiled = compiled + 1 end
    if r.status == "compile_error" and M.undeclared(r.message) then undeclared = undeclared + 1 end
    local used = r.code and stages.detect(r.code)
    if used and stages.vector_bits(used.simd) > width then beyond = beyond + 1 end
    local combo = used and table.concat(stages.list(used), "+") or nil
    if combo == "" then combo = "plain" end
    if combo then combos[combo] = (combos[combo] or 0) + 1 end
    if r.status == "ok" then
      verified = verified + 1
      verified_combos[combo] = (verified_combos[combo] or 0) + 1
      if not best or r.gflops > best then best = r.gflops end
    end
    local text = r.completion or ""
    texts[text] = (texts[text] or 0) + 1
  end
  local function size(set)
    local k = 0
    for _ in pairs(set) do k = k + 1 end
    return k
  end
  local top = 0
  for _, c in pairs(texts) do top = math.max(top, c) end
  return {samples = n, compiled = compiled, verified = verified,
          compile_rate = n > 0 and compiled / n or 0, verify_rate = n > 0 and verified / n or 0,
          combinations = size(combos), verified_combinations = size(verified_combos),
          combos = combos, verified_combos = verified_combos, distinct_texts = size(texts),
          top_text_share = n > 0 and top / n or 0, counts = counts, best_gflops = best,
          isa = isa or stages.default_isa, beyond_isa = beyond, undeclared = undeclared}
end

-- The prompts a group asks: the first of `which` (write: SQD's at the stage; fixed;
-- reworded), or with `each_wording` every held-out wording.
local function asked_prompts(which, stage, task, each_wording)
  if which == "write" then return {prompts.write(stage, task)} end
  if which ~= "reworded" then return {prompts.fixed(task)[1]} end
  local all = prompts.reworded(task)
  return each_wording and all or {all[1]}
end

-- The functions a completion defines at the top level (a line that starts with its type),
-- in order.
function M.defined_names(text)
  local names = {}
  for line in text:gmatch("[^\n]+") do
    local name = line:match("^[%a_][%w_%s%*]-[%s%*]([%a_][%w_]*)%s*%(")
    if name and not line:match("^return") then names[#names + 1] = name end
  end
  return names
end

-- The completion with the first function it defines renamed to `entry`, wherever that name
-- stands as a word.
function M.renamed_entry(text, entry)
  local name = M.defined_names(text)[1]
  if not name or name == entry then return text end
  return (text:gsub("%f[%w_]" .. name .. "%f[^%w_]", entry))
end

-- How a group named its function: how many kernels define `entry`, and of the others the
-- last function each defines (helpers come before the function they serve; "none" where it
-- defines none), most frequent first.
function M.names_written(results, entry)
  local named, others = 0, {}
  for _, r in ipairs(results) do
    local names = M.defined_names(r.completion or "")
    local found = false
    for _, n in ipairs(names) do found = found or n == entry end
    if found then named = named + 1
    else
      local last = names[#names] or "none"
      others[last] = (others[last] or 0) + 1
    end
  end
  local list = {}
  for name, count in pairs(others) do list[#list + 1] = {name = name, count = count} end
  table.sort(list, function(a, b) return a.count > b.count or (a.count == b.count and a.name < b.name) end)
  return named, list
end

-- What --prefill puts at the start of the answer (prompts.answer_start, as the experiments').
M.answer_start = prompts.answer_start

-- One group: `opts.n` kernels for the task's first `which` prompt, judged.
local function check(pol, dir, deps, opts, which)
  -- the problem and benchmark settings exactly as the experiments build them
  local config = {opt = opts.opt}
  local task = wiring.task(opts, config)
  local stage = math.min(opts.stage, stages.for_task(task.name).count)
  local asked = asked_prompts(which, stage, task, opts.wordings == "each")
  if opts.n % #asked ~= 0 then
    cli.fail(string.format("--wordings=each spreads --n over the %d held-out wordings: --n=%d is not a "
                           .. "multiple (or ask --wordings=first)", #asked, opts.n))
  end
  local begun = opts.prefill and M.answer_start(task.name) or ""  -- a CUDA task refused it (options)
  local rendered = {}
  for i, messages in ipairs(asked) do rendered[i] = prompts.render(messages) .. begun end
  local t0 = sys.now()
  local out = pol:sample(rendered, {n = opts.n // #asked, temperature = opts.temperature,
                                    max_tokens = opts.max_tokens, seed = opts.seed})
  local t1 = sys.now()
  local entry = opts.rename_entry and not task.cuda and tasks.get(task.name or "matmul").entry
  local texts, wording = {}, {}  -- what is judged: the given beginning and the completion, its function renamed
  for w, group in ipairs(out) do
    for _, c in ipairs(group) do
      texts[#texts + 1] = begun .. c.text
      if entry then texts[#texts] = M.renamed_entry(texts[#texts], entry) end
      wording[#texts] = #asked > 1 and w or nil
    end
  end
  local results = evaluate.completions(texts, {bench = deps.bench,
                                             bench_opts = wiring.bench_opts(opts, config),
                                             stage = opts.prompt == "write" and stage or nil,
                                             isa = task.isa, task = task.name})
  for i, r in ipairs(results) do r.wording = wording[i] end
  local f = M.figures(results, task.isa)
  f.model, f.prompt, f.stage, f.temperature, f.seed = dir, opts.prompt, stage,
                                                      opts.temperature, opts.seed
  f.task = task.name or "matmul"
  f.sample_seconds, f.evaluate_seconds = t1 - t0, sys.now() - t1
  return f, results
end

function M.run(opts)
  options.check_task(opts)  -- the task exists, and its size
  local deps = wiring.deps()
  local pol, dir = wiring.load_policy({model = opts.model, device = opts.device,
                                       dtype = "fp32"}, deps)
  return check(pol, dir, deps, opts, opts.prompt)
end

---------------------------------------------------------------------------------------
-- Every task of a split
---------------------------------------------------------------------------------------

-- The tasks of each split, in order: {split = ..., task = ..., prompt = ...}.
function M.split_tasks(split, user_names)
  local training = {"matmul"}
  for _, t in ipairs(tasks.list("train")) do
    if not user_names[t.name] and t.name ~= "matmul" then training[#training + 1] = t.name end
  end
  local heldout = {}
  for _, t in ipairs(tasks.list("heldout")) do heldout[#heldout + 1] = t.name end
  local user = {}
  for name in pairs(user_names) do user[#user + 1] = name end
  table.sort(user)
  local of = {train = {training, "fixed"}, heldout = {heldout, "fixed"}, wordings = {training, "reworded"},
              user = {user, "fixed"}}
  local order = split == "all" and {"train", "heldout", "wordings"} or {split}
  local out = {}
  for _, s in ipairs(order) do
    for _, name in ipairs(of[s][1]) do out[#out + 1] = {split = s, task = name, prompt = of[s][2]} end
  end
  return out
end

-- Appends one JSON line per judged kernel of a group to `path` (nothing without a path).
function M.write_kernels(path, where, results)
  if not path then return end
  local f = assert(io.open(path, "a"))
  for i, r in ipairs(results) do
    f:write(json.encode({split = where.split, task = where.task, prompt = where.prompt, index = i,
                         wording = r.wording, status = r.status, message = r.message,
                         completion = r.completion}), "\n")
  end
  f:close()
end

-- A group's kernels per held-out wording they were asked in ({samples, verified} a
-- wording), or nil when they were asked one prompt.
function M.by_wording(results)
  local by = nil
  for _, r in ipairs(results) do
    if r.wording then
      by = by or {}
      for w = #by + 1, r.wording do by[w] = {samples = 0, verified = 0} end
      by[r.wording].samples = by[r.wording].samples + 1
      if r.status == "ok" then by[r.wording].verified = by[r.wording].verified + 1 end
    end
  end
  return by
end

-- A group's roofline score: the mean of its kernels' (wiring.roofline_score; 0 if not ok).
function M.roofline_score(results, limit)
  if not (limit and limit > 0) or #results == 0 then return nil end
  local sum = 0
  for _, r in ipairs(results) do sum = sum + wiring.roofline_score(r, limit) end
  return sum / #results
end

function M.run_splits(opts)
  if opts.split == "user" and opts.task_dir == "" then
    cli.fail("--split=user checks the tasks of --task_dir: name the folder")
  end
  options.add_task_dir(opts)
  local user_names = {}  -- the folder's tasks, also those that replace one of the suite's
  for _, t in ipairs(tasks.list()) do
    if opts.task_dir ~= "" and t.file:sub(1, #opts.task_dir + 1) == opts.task_dir .. "/" then user_names[t.name] = true end
  end
  local deps = wiring.deps()
  local pol, dir = wiring.load_policy({model = opts.model, device = opts.device, dtype = "fp32"}, deps)
  local machine = deps.bench.machine()
  local rows = {}
  for _, item in ipairs(M.split_tasks(opts.split, user_names)) do
    local o = setmetatable({task = item.task, task_size = ""}, {__index = opts})
    if item.task ~= "matmul" then
      o.task_size = tasks.asked_size(tasks.get(item.task))
    end
    local f, results = check(pol, dir, deps, o, item.prompt)
    local named, instead = M.names_written(results, tasks.get(item.task).entry)
    M.write_kernels(opts.kernels, item, results)
    local limit = wiring.roofline(machine, item.task, opts.threads)
    rows[#rows + 1] = {split = item.split, task = item.task, prompt = item.prompt, samples = f.samples,
                       verified = f.verified, verify_rate = f.verify_rate,
                       format_violations = f.counts.format_violation or 0,
                       compile_errors = f.counts.compile_error or 0, undeclared = f.undeclared,
                       roofline = M.roofline_score(results, limit), counts = f.counts,
                       by_wording = M.by_wording(results),
                       named = named, names_instead = instead,
                       sample_seconds = f.sample_seconds, evaluate_seconds = f.evaluate_seconds}
    log.info("checked", {split = item.split, task = item.task, verified = f.verified, of = f.samples})
  end
  return {model = dir, n = opts.n, temperature = opts.temperature, seed = opts.seed, rows = rows,
          splits = M.split_summary(rows), machine = machine}
end

-- Per split: tasks, the mean and the lowest verified share over its tasks, the mean
-- roofline score and format-violation share, and its compile errors: how many, and how many
-- of them on an undeclared name.
function M.split_summary(rows)
  local by, order = {}, {}
  for _, r in ipairs(rows) do
    local s = by[r.split]
    if not s then
      s = {split = r.split, tasks = 0, verify_sum = 0, lowest = nil, roofline_sum = 0, roofline_n = 0,
           violations = 0, samples = 0, compile_errors = 0, undeclared = 0}
      by[r.split], order[#order + 1] = s, r.split
    end
    s.tasks, s.verify_sum = s.tasks + 1, s.verify_sum + r.verify_rate
    s.lowest = math.min(s.lowest or 1, r.verify_rate)
    if r.roofline then s.roofline_sum, s.roofline_n = s.roofline_sum + r.roofline, s.roofline_n + 1 end
    s.violations, s.samples = s.violations + r.format_violations, s.samples + r.samples
    s.compile_errors, s.undeclared = s.compile_errors + (r.compile_errors or 0), s.undeclared + (r.undeclared or 0)
  end
  local out = {}
  for _, name in ipairs(order) do
    local s = by[name]
    out[#out + 1] = {split = name, tasks = s.tasks, verify_rate = s.verify_sum / s.tasks, lowest = s.lowest,
                     roofline = s.roofline_n > 0 and s.roofline_sum / s.roofline_n or nil,
                     violation_rate = s.samples > 0 and s.violations / s.samples or 0,
                     compile_errors = s.compile_errors, undeclared = s.undeclared}
  end
  return out
end

local function pct(x) return x and string.format("%.1f%%", 100 * x) or "-" end

function M.print_splits(r)
  print(string.format("%s: %d samples a prompt at temperature %g (seed %d)", r.model, r.n, r.temperature, r.seed))
  print("| split | task | prompt | verified | roofline score | format violations |")
  print("| --- | --- | --- | ---: | ---: | ---: |")
  for _, row in ipairs(r.rows) do
    print(string.format("| %s | %s | %s | %d of %d (%s) | %s | %d |", row.split, row.task, row.prompt,
                        row.verified, row.samples, pct(row.verify_rate),
                        row.roofline and string.format("%.2f%%", row.roofline) or "-", row.format_violations))
  end
  print("")
  print("| split | tasks | verified share (mean over tasks) | lowest task | roofline score | format violations "
        .. "| compile errors (on an undeclared name) |")
  print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
  for _, s in ipairs(r.splits) do
    print(string.format("| %s | %d | %s | %s | %s | %s | %d (%d) |", s.split, s.tasks, pct(s.verify_rate),
                        pct(s.lowest), s.roofline and string.format("%.2f%%", s.roofline) or "-",
                        pct(s.violation_rate), s.compile_errors, s.undeclared))
  end
  M.print_wordings(r.rows)
  M.print_names(r.rows)
  print(wiring.rooflines_text(r.machine))
end

-- The tasks some of whose kernels do not define the asked function: how many do, and what
-- the others define instead (a model that reads the name from the statement, not the prototype,
-- shows here before anything else does).
function M.print_names(rows)
  local shown = false
  for _, row in ipairs(rows) do
    if row.named and row.named < row.samples then
      if not shown then
        print("")
        print("| split | task | define the asked function | last function the others define (most frequent) |")
        print("| --- | --- | ---: | --- |")
        shown = true
      end
      local instead = {}
      for i = 1, math.min(3, #row.names_instead) do
        instead[i] = string.format("`%s` %d", row.names_instead[i].name, row.names_instead[i].count)
      end
      print(string.format("| %s | %s | %d of %d | %s |", row.split, row.task, row.named, row.samples,
                          table.concat(instead, ", ")))
    end
  end
end

-- With --wordings=each: the verified kernels per held-out wording, over the split's tasks.
function M.print_wordings(rows)
  local sum = {}
  for _, row in ipairs(rows) do
    for w, c in ipairs(row.by_wording or {}) do
      sum[w] = sum[w] or {samples = 0, verified = 0}
      sum[w].samples, sum[w].verified = sum[w].samples + c.samples, sum[w].verified + c.verified
    end
  end
  if #sum == 0 then return end
  print("")
  print("| held-out wording | verified, all tasks |")
  print("| ---: | ---: |")
  for w, c in ipairs(sum) do
    print(string.format("| %d | %d of %d (%s) |", w, c.verified, c.samples, pct(c.verified / c.samples)))
  end
end

function M.print(f)
  print(string.format("%s, task %s, %s prompt%s for %s, %d samples at temperature %g (seed %d)", f.model,
                      f.task or "matmul", f.prompt, f.prompt == "write" and (" stage " .. f.stage) or "",
                      stages.isa(f.isa).name, f.samples, f.temperature, f.seed))
  print(string.format("  compile      %3d  (%.0f%%)", f.compiled, 100 * f.compile_rate))
  print(string.format("  verified     %3d  (%.0f%%)   best %s GFLOPS", f.verified,
                      100 * f.verify_rate, f.best_gflops and string.format("%.2f", f.best_gflops) or "-"))
  print(string.format("  wider vectors than %s: %d (%.0f%%)", stages.isa(f.isa).name, f.beyond_isa,
                      f.samples > 0 and 100 * f.beyond_isa / f.samples or 0))
  print(string.format("  technique combinations: %d among all, %d among verified",
                      f.combinations, f.verified_combinations))
  print(string.format("  distinct texts %d; the most frequent is %.1f%% of the samples",
                      f.distinct_texts, 100 * f.top_text_share))
  print("  statuses: " .. metrics.counts_text(f.counts))
  local names = {}
  for combo in pairs(f.verified_combos) do names[#names + 1] = combo end
  table.sort(names, function(a, b) return f.verified_combos[a] > f.verified_combos[b] or
                                          (f.verified_combos[a] == f.verified_combos[b] and a < b) end)
  for _, combo in ipairs(names) do
    print(string.format("    %3d  %s", f.verified_combos[combo], combo))
  end
  print(string.format("  sampling %.1f s, evaluation %.1f s", f.sample_seconds, f.evaluate_seconds))
end

function M.main(argv)
  local opts = args.parse(argv, M.spec)
  if opts.kernels then assert(io.open(opts.kernels, "w")):close() end  -- this run's kernels only
  if opts.split ~= "" then
    local r = M.run_splits(opts)
    M.print_splits(r)
    if opts.json then json.write(opts.json, r) end
    return
  end
  local f, results = M.run(opts)
  M.write_kernels(opts.kernels, {split = "", task = f.task, prompt = f.prompt}, results)
  M.print(f)
  if opts.json then json.write(opts.json, f) end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
