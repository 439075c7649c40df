-- Whether a policy copies the function name a prompt gives it: for each task, the model's own
-- greedy answer up to the name of the function it defines, then the task's name in its place,
-- scored piece by piece (the probability of each of the name's tokens given the ones before).
-- A model that copies gives the pieces after the first a probability near 1; one that recalls
-- or makes up names, near 0. The copy score is their mean over the tasks. Comparison names
-- (--also, e.g. the name a training task had) are scored in the same place.
--
--   engine name_probe.lua --model=DIR                            # data/train/copy-probe-tasks
--   engine name_probe.lua --model=DIR --task_dir=mytasks --also=axpy --json=probe.json

local args = require "engine.args"
local cli = require "core.cli"
local json = require "engine.json"
local options = require "run.options"
local prompts = require "method.prompts"
local tasks = require "engine.tasks"
local tokenizer = require "engine.tokenizer"
local wiring = require "method.wiring"

local M = {}

M.spec = {
  description = "Scores, piece by piece, the function name each task's prompt gives, where the "
    .. "policy's own answer names its function: whether it copies the name.",
  options = {
    {"model", nil, "policy checkpoint [default: " .. wiring.default_model .. "]", type = "string"},
    {"task_dir", engine.root .. "/data/train/copy-probe-tasks", "the tasks whose names are probed (every task of the folder)"},
    {"also", "", "names scored in the same place for comparison, comma-separated"},
    {"isa", "auto", "vector ISA the prompts name (auto: this machine's)", choices = {"auto", "avx512", "avx2"}},
    {"max_tokens", 512, "longest greedy answer in tokens", min = 1},
    {"device", "cpu", "device of the policy: auto, cpu, cuda or cuda:N", check = options.check_device},
    {"json", nil, "write the figures to this file", type = "string"},
  },
}

-- The answer's text before its definition's name: up to the first line that starts with the
-- task's return type and a name; a prompt answered without one is given "```c\n" and the type.
function M.head(answer, returns)
  local pattern = "^(.-\n" .. returns:gsub("%p", "%%%0") .. ")%s+[%a_][%w_]*%s*%("
  return answer:match(pattern) or ("```c\n" .. returns)
end

-- Each token of `name` after `head` with its probability: {{piece =, p =}, ...}. The pieces
-- start where the text's tokens part from the head's (a tokenizer may merge across the two).
local function pieces(pol, tok, prompt, head, name)
  local text = head .. " " .. name
  local ids, head_ids = tok:encode(text), tok:encode(head)
  local before = 0
  while before < #head_ids and head_ids[before + 1] == ids[before + 1] do before = before + 1 end
  local lp = pol:logprobs(prompt, ids)  -- these very tokens scored
  local out = {}
  for i = before + 1, #ids do out[#out + 1] = {piece = tok:decode({ids[i]}), p = math.exp(lp[i])} end
  return out
end

-- The mean probability of the pieces after the first (nil for a one-piece name).
function M.copy_score(list)
  if #list < 2 then return nil end
  local sum = 0
  for i = 2, #list do sum = sum + list[i].p end
  return sum / (#list - 1)
end

function M.run(opts)
  local folder = opts.task_dir:gsub("/+$", "")
  tasks.add_dir(folder)
  local names = {}
  for _, t in ipairs(tasks.list()) do
    if t.file:sub(1, #folder + 1) == folder .. "/" then names[#names + 1] = t.name end
  end
  table.sort(names)
  if #names == 0 then cli.fail("--task_dir=" .. opts.task_dir .. ": no task in it") end
  local pol, dir = wiring.load_policy({model = opts.model, device = opts.device, dtype = "fp32"}, wiring.deps())
  local tok = tokenizer.load(dir)
  local rows, total, counted = {}, 0, 0
  for _, name in ipairs(names) do
    local spec = tasks.get(name)
    local task = wiring.task({task = name, task_size = tasks.asked_size(spec), size = 256, threads = 0, isa = opts.isa},
                             {opt = "O3"})
    local prompt = prompts.render(prompts.fixed(task)[1])
    local answer = pol:sample({prompt}, {n = 1, temperature = 0, max_tokens = opts.max_tokens, seed = 1})[1][1].text
    local head = M.head(answer, spec.returns)
    local written = answer:sub(1, #head) == head and answer:sub(#head + 1):match("^%s*([%a_][%w_]*)") or nil
    local row = {task = name, entry = spec.entry, written = written,
                 pieces = pieces(pol, tok, prompt, head, spec.entry), also = {}}
    row.copy_score = M.copy_score(row.pieces)
    if row.copy_score then total, counted = total + row.copy_score, counted + 1 end
    for other in opts.also:gmatch("[^,%s]+") do row.also[other] = pieces(pol, tok, prompt, head, other) end
    rows[#rows + 1] = row
  end
  return {model = dir, rows = rows, copy_score = counted > 0 and total / counted or nil}
end

local function listed(list)
  local parts = {}
  for i, x in ipairs(list) do parts[i] = string.format("%s %.2f", x.piece, x.p) end
  return table.concat(parts, " | ")
end

function M.print(r)
  print(r.model .. ": each name's pieces and their probabilities where the greedy answer names its function")
  for _, row in ipairs(r.rows) do
    print(string.format("%s (writes %s): %s", row.entry, row.written or "no definition", listed(row.pieces)))
    for other, list in pairs(row.also) do print(string.format("  %s in its place: %s", other, listed(list))) end
  end
  print(r.copy_score and string.format("copy score (the pieces after the first, mean over tasks): %.3f", r.copy_score)
        or "copy score: no name of more than one piece")
end

function M.main(argv)
  local opts = args.parse(argv, M.spec)
  local r = M.run(opts)
  M.print(r)
  if opts.json then json.write(opts.json, r) end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
