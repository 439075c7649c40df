-- Which name a policy gives its function under each wording of a task: the greedy answer
-- (temperature 0, seed 1) to the first fixed prompt and to each held-out wording
-- (prompts.reworded: framing i is wording i and i + 4), and the name of the last function
-- it defines, after its helpers, as model_check's names table reads it ('?' where none).
-- (Until 2026-11-30 the first `void` function was read: data files of earlier models show
-- '?' for asum and dot, which return a value.)
-- A model that reads the name from the prototype writes the task's name under every
-- wording; one that reads it from the sentence before writes words of that sentence.
--
--   engine framing_names.lua --model=DIR
--   engine framing_names.lua --model=DIR --tasks=axpy,ger --max_tokens=200

local args = require "engine.args"
local cli = require "core.cli"
local prompts = require "method.prompts"
local wiring = require "method.wiring"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local model_check = dofile(here .. "/model_check.lua")

local M = {}

M.spec = {
  description = "The name a policy gives its function under the first fixed prompt and each held-out wording.",
  options = {
    {"model", nil, "policy checkpoint [default: " .. wiring.default_model .. "]", type = "string"},
    {"tasks", "axpy,asum,dot,ger,trsv,gemv_n", "the training tasks asked, comma-separated"},
    {"max_tokens", 160, "longest greedy answer in tokens", min = 1},
  },
}

-- The name of the last function a text defines, or "?".
function M.written_name(text)
  local names = model_check.defined_names(text)
  return names[#names] or "?"
end

function M.run(opts)
  local pol = wiring.load_policy({model = opts.model, device = "cpu", dtype = "fp32"}, wiring.deps())
  local rows = {}
  for name in opts.tasks:gmatch("[^,]+") do
    local task = wiring.task({task = name, task_size = "train", size = 256, threads = 0, isa = "auto"}, {opt = "O3"})
    local asked = {prompts.render(prompts.fixed(task)[1])}
    for _, p in ipairs(prompts.reworded(task)) do asked[#asked + 1] = prompts.render(p) end
    local row = {task = name, names = {}}
    for i, prompt in ipairs(asked) do
      local answer = pol:sample({prompt}, {n = 1, temperature = 0, max_tokens = opts.max_tokens, seed = 1})[1][1].text
      row.names[i] = M.written_name(answer)
    end
    rows[#rows + 1] = row
  end
  return rows
end

function M.print(rows)
  for _, row in ipairs(rows) do
    local cells = {}
    for i, n in ipairs(row.names) do cells[i] = (i == 1 and "fixed:" or ("w" .. (i - 1) .. ":")) .. n end
    print(row.task, table.concat(cells, " "))
  end
end

function M.main(argv)
  M.print(M.run(args.parse(argv, M.spec)))
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
