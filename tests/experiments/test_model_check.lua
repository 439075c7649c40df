-- model_check.lua --split: every task of a split asked, and the figures per task and split.
local t = require "engine.test"
local args = require "engine.args"
local tasks = require "engine.tasks"
local model_check = dofile(engine.scripts[1] .. "/model_check.lua")

t.test("--rename_entry renames the first function a completion defines, and only as a word", function()
  local text = "Here:\n```c\n#include <omp.h>\nstatic void u11_win(int n, double *y) {\n"
    .. "  for (int i = 0; i < n; ++i) y[i] = 0;\n}\n/* u11_win2 stays */\n```"
  local renamed = model_check.renamed_entry(text, "conv1d")
  t.contains(renamed, "static void conv1d(int n, double *y)")
  t.contains(renamed, "u11_win2 stays")
  t.eq(model_check.renamed_entry(text:gsub("u11_win%(", "conv1d("), "conv1d"), (text:gsub("u11_win%(", "conv1d(")))
  t.eq(model_check.renamed_entry("no code at all", "f"), "no code at all")
  -- an indented call or a return is not a definition
  t.eq(model_check.renamed_entry("  return exp(x);\nvoid g(void) {}", "f"), "  return exp(x);\nvoid f(void) {}")
end)

t.test("a group's names: how many kernels define the asked function, what the others define instead", function()
  local function kernel(name) return {completion = "```c\nstatic double hsum(double x) {\n  return x;\n}\nvoid " .. name
                                                  .. "(int n, double *y) {\n  y[0] = hsum(1);\n}\n```"} end
  local results = {kernel("conv1d"), kernel("sigv"), kernel("sigv"), kernel("feld"), {completion = "I cannot."},
                   {completion = "void conv1d_v(int n) {}"}}
  local named, instead = model_check.names_written(results, "conv1d")
  t.eq(named, 1)
  -- the last function each defines, after its helpers
  t.eq(instead, {{name = "sigv", count = 2}, {name = "conv1d_v", count = 1}, {name = "feld", count = 1},
                 {name = "none", count = 1}})
  t.eq(model_check.defined_names(kernel("f").completion), {"hsum", "f"})
end)

t.test("framing_names.lua: the name written under the fixed prompt and each held-out wording", function()
  local framing_names = dofile(engine.scripts[1] .. "/framing_names.lua")
  t.eq(framing_names.written_name("```c\nstatic inline double h(double x) { return x; }\nvoid sigv(int n) {\n}\n```"), "sigv")
  t.eq(framing_names.written_name("double dot(int n) { return 0; }"), "dot")
  t.eq(framing_names.written_name("I cannot write that."), "?")
  local rows = framing_names.run(args.parse({[0] = "framing_names.lua", "--tasks=axpy", "--max_tokens=48"},
                                            framing_names.spec))
  t.eq(#rows, 1)
  t.eq(#rows[1].names, 9)  -- the first fixed prompt and eight held-out wordings
end)

t.test("--rename_entry gives matmul's kernels matmul's entry, matmul_optimized", function()
  local opts = args.parse({[0] = "model_check.lua", "--task=matmul", "--prompt=fixed", "--n=2", "--runs=1",
                           "--max_tokens=96", "--rename_entry"}, model_check.spec)
  local _, results = model_check.run(opts)
  local defined = 0
  for _, r in ipairs(results) do
    local name = r.completion:match("\nvoid%s+([%a_][%w_]*)%s*%(")
    if name then
      defined = defined + 1
      t.eq(name, "matmul_optimized")
    end
  end
  t.ok(defined > 0, "the default model defines a function in 96 tokens")
end)

t.test("--prefill begins the answer with a fence, the headers and the task's prototype line", function()
  t.eq(model_check.answer_start("axpy"),
       "```c\n#include <immintrin.h>\n#include <omp.h>\n\nvoid axpy(int n, double alpha, const double *x, double *y) {\n")
  t.contains(model_check.answer_start(nil), "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n")
  t.eq(model_check.answer_start("matmul"), model_check.answer_start(nil))
end)

t.test("the splits list the suite's tasks, each split with its prompt", function()
  local list = model_check.split_tasks("all", {})
  local by = {}
  for _, item in ipairs(list) do
    by[item.split] = by[item.split] or {}
    by[item.split][item.task] = item.prompt
  end
  t.eq(by.train.matmul, "fixed")
  t.eq(by.wordings.matmul, "reworded")
  for _, h in ipairs(tasks.list("heldout")) do
    t.eq(by.heldout[h.name], "fixed")
    t.eq(by.train[h.name], nil, h.name .. " is held out, not a training task")
  end
  local n = 0
  for _ in pairs(by.train) do n = n + 1 end
  t.eq(n, #tasks.list("train"))  -- matmul is one of them, asked once
  t.eq(by.user, nil)
  -- a user's folder is its own split and leaves the training split as it was
  local user = model_check.split_tasks("user", {mine = true})
  t.eq(#user, 1)
  t.eq(user[1].task, "mine")
  for _, item in ipairs(model_check.split_tasks("train", {mine = true})) do t.ok(item.task ~= "mine") end
end)

t.test("a group's roofline score counts failed kernels as 0; a split averages its tasks", function()
  local results = {{status = "ok", gflops = 50}, {status = "compile_error"}, {status = "ok", speed = 10, gflops = 1}}
  t.near(model_check.roofline_score(results, 100), 20, 1e-9)
  t.eq(model_check.roofline_score(results, nil), nil)
  local s = model_check.split_summary({
    {split = "a", verify_rate = 0.5, roofline = 10, format_violations = 1, samples = 4, compile_errors = 2,
     undeclared = 1},
    {split = "a", verify_rate = 0.25, roofline = 30, format_violations = 0, samples = 4, compile_errors = 1,
     undeclared = 1},
    {split = "b", verify_rate = 0, roofline = 0, format_violations = 4, samples = 4},
  })
  t.eq(s[1].compile_errors, 3)
  t.eq(s[1].undeclared, 2)
  t.eq(s[2].compile_errors, 0)
  t.eq(#s, 2)
  t.near(s[1].verify_rate, 0.375, 1e-12)
  t.eq(s[1].lowest, 0.25)
  t.near(s[1].roofline, 20, 1e-12)
  t.near(s[1].violation_rate, 1 / 8, 1e-12)
  t.eq(s[2].violation_rate, 1)
end)

t.test("a compile error on a name never declared is told from other compile errors by its first error", function()
  t.ok(model_check.undeclared("kernel.c: In function 'f':\nkernel.c:12:25: error: 'BS' undeclared (first use in this function)\n"))
  t.ok(not model_check.undeclared("kernel.c:7:5: error: unterminated argument list invoking macro \"_mm_prefetch\"\n"
                                  .. "kernel.c:9:1: error: 'i' undeclared (first use in this function)"))
  t.ok(not model_check.undeclared(nil))
  local f = model_check.figures({{status = "compile_error", message = "k.c:1:1: error: 'x' undeclared here"},
                                 {status = "compile_error", message = "k.c:1:1: error: expected ';' before '}'"},
                                 {status = "format_violation"}})
  t.eq(f.counts.compile_error, 2)
  t.eq(f.undeclared, 1)
end)

t.test("the default model asked every held-out task: a row per task and one split", function()
  local opts = args.parse({[0] = "model_check.lua", "--split=heldout", "--n=1", "--runs=1",
                           "--max_tokens=64"}, model_check.spec)
  local r = model_check.run_splits(opts)
  t.eq(#r.rows, #tasks.list("heldout"))
  for _, row in ipairs(r.rows) do
    t.eq(row.split, "heldout")
    t.eq(row.samples, 1)
    t.ok(row.verified + row.format_violations <= 1)
  end
  t.eq(#r.splits, 1)
  t.eq(r.splits[1].tasks, #r.rows)
end)

t.test("--split=user asks the tasks of --task_dir, and without it is a clear error", function()
  local opts = args.parse({[0] = "model_check.lua", "--split=user"}, model_check.spec)
  t.raises(function() model_check.run_splits(opts) end, "task_dir")
  local dir = t.tmpdir()
  local axpy = assert(io.open(engine.root .. "/stdlib/tasks/axpy.lua")):read("a")
  local f = assert(io.open(dir .. "/mine.lua", "w"))
  f:write((axpy:gsub("axpy", "mine")))
  f:close()
  local kernels = dir .. "/kernels.jsonl"
  opts = args.parse({[0] = "model_check.lua", "--split=user", "--task_dir=" .. dir, "--n=2", "--runs=1",
                     "--max_tokens=64", "--kernels=" .. kernels}, model_check.spec)
  local r = model_check.run_splits(opts)
  t.eq(#r.rows, 1)
  t.eq(r.rows[1].task, "mine")
  t.eq(r.rows[1].split, "user")
  -- --kernels: each judged kernel, its verdict beside its text
  local lines = {}
  for line in io.lines(kernels) do lines[#lines + 1] = json.decode(line) end
  t.eq(#lines, 2)
  for i, k in ipairs(lines) do
    t.eq({k.split, k.task, k.prompt, k.index}, {"user", "mine", "fixed", i})
    t.ok(type(k.status) == "string" and type(k.completion) == "string", k.status)
  end
  -- --prefill: the judged text is the answer's given beginning and what the model wrote after it
  opts = args.parse({[0] = "model_check.lua", "--split=user", "--task_dir=" .. dir, "--n=2", "--runs=1",
                     "--max_tokens=32", "--prefill", "--kernels=" .. kernels}, model_check.spec)
  assert(io.open(kernels, "w")):close()  -- as main does: this run's kernels only
  model_check.run_splits(opts)
  local begun = model_check.answer_start("mine")
  for line in io.lines(kernels) do
    local k = json.decode(line)
    t.eq(k.completion:sub(1, #begun), begun)
    t.ok(#k.completion > #begun, "the model wrote after the beginning")
  end
end)

t.test("--wordings=each asks every held-out wording in turn; --n must spread over them evenly", function()
  local wordings = #require("method.prompts").reworded_task_templates
  local dir = t.tmpdir()
  local kernels = dir .. "/kernels.jsonl"
  local opts = args.parse({[0] = "model_check.lua", "--split=wordings", "--wordings=each", "--n=" .. wordings,
                           "--runs=1", "--max_tokens=16", "--kernels=" .. kernels}, model_check.spec)
  local r = model_check.run_splits(opts)
  for _, row in ipairs(r.rows) do
    t.eq(#row.by_wording, wordings, row.task)
    local verified = 0
    for _, c in ipairs(row.by_wording) do
      t.eq(c.samples, 1)
      verified = verified + c.verified
    end
    t.eq(verified, row.verified)
  end
  local seen = {}
  for line in io.lines(kernels) do
    local k = json.decode(line)
    if k.task == "axpy" then seen[#seen + 1] = k.wording end
  end
  local in_turn = {}
  for w = 1, wordings do in_turn[w] = w end
  t.eq(seen, in_turn)
  opts = args.parse({[0] = "model_check.lua", "--split=wordings", "--wordings=each", "--n=" .. (wordings + 1),
                     "--max_tokens=16"}, model_check.spec)
  t.raises(function() model_check.run_splits(opts) end, "not a multiple")
end)

t.run()
