-- The held-out split: everything a comparison calls held out (heldout.lua's three parts),
-- which no training data may hold. The pretraining generators (kernelgen, its task and CUDA
-- families) and KernelCompare's SFT pairs refuse to emit an item of it; audit.lua looks for
-- it in a model's rebuilt corpus. One definition, read by all of them.
--
--   local split = require "method.heldout_split"
--   split.matmul_sizes                 -- matmul's held-out M = N = K: {192, 384}
--   split.matmul_heldout_size(128)     -- heldout.lua's default for a training size: 192
--   split.tasks(), split.cuda_tasks()  -- the held-out tasks' specs (CPU suite, CUDA)
--   split.task_size("axpy")            -- a task of the suite's held-out size (its "heldout")
--   split.overlaps(ex)                 -- the held-out items an example holds, by kind
--   split.check(ex, "kernelgen")       -- raises, naming the first one
--
-- The items, by kind (split.kinds):
--   prompt   an exact held-out prompt: what heldout.lua asks (prompts.fixed at a held-out
--            size, prompts.reworded at any size, a held-out task's prompts.fixed at its
--            size "test"), at the example's own compiler level, threads and ISA
--   size     a held-out size of the example's task, in the form its prompt writes it:
--            matmul with any of M, N, K in matmul_sizes (or `opts.matmul_sizes`); a task
--            of the suite or a CUDA task at its named size "heldout"
--   wording  a run of 8 whitespace-separated words (split.run_words) of a held-out wording
--            (prompts.reworded of matmul at 128 and 256 and of every training task, for
--            each ISA) that is in none of that task's training prompts (fixed, write,
--            improve, advance, repair, refine at every stage): the statement, signature,
--            sizes, technique names and answer format they share are not counted
--   task     a held-out task (CPU suite or CUDA): its name or function as a word, its
--            statement, its prototype or signature
--
-- An example: {task = "matmul" | a suite task's name | "cuda:NAME", size = {M =, N =, K =}
-- (matmul) or a named size or a table of variables, isa =, prompt = the user's message
-- (or messages = the chat), completion =}.

local prompts = require "method.prompts"
local stages = require "method.stages"
local tasks = require "engine.tasks"

local M = {}

M.kinds = {"prompt", "size", "wording", "task"}
M.kind_names = {prompt = "exact held-out prompt", size = "held-out size", wording = "held-out wording",
                task = "held-out task"}

-- heldout.lua's matmul size for a training size: --heldout_size when given, else 1.5
-- times the training size rounded to a multiple of 16 (128 -> 192).
function M.matmul_heldout_size(size, given)
  if given and given > 0 then return given end
  return math.max(16, math.floor(1.5 * size / 16 + 0.5) * 16)
end

-- The training sizes of the experiments' matmul (Experiment 1's default --size, Table
-- II's) and the held-out size of each.
M.matmul_training_sizes = {128, 256}
M.matmul_sizes = {}
for i, s in ipairs(M.matmul_training_sizes) do M.matmul_sizes[i] = M.matmul_heldout_size(s) end

-- The suite's held-out tasks (split "heldout"), and the CUDA tasks'.
function M.tasks() return tasks.list("heldout") end

function M.cuda_tasks()
  local out = {}
  for _, spec in ipairs(require("engine.cuda_tasks").list()) do
    if spec.split == "heldout" then out[#out + 1] = spec end
  end
  return out
end

-- A task of the suite's held-out size: its named size "heldout" (M.size_name).
M.size_name = "heldout"
function M.task_size(name) return tasks.get(name).sizes[M.size_name] end

-- The held-out wordings of a task (heldout.lua's part "wordings"): eight prompts.
M.wordings = prompts.reworded

-- The vector ISAs the wordings are checked in.
M.isas = {}
for isa in pairs(stages.isas) do M.isas[#M.isas + 1] = isa end
table.sort(M.isas)

---------------------------------------------------------------------------------------
-- Wordings: runs of words
---------------------------------------------------------------------------------------

M.run_words = 8

local function words(text)
  local out = {}
  for w in text:gmatch("%S+") do out[#out + 1] = w end
  return out
end

-- Every run of run_words words of `text` into `set`.
local function add_runs(set, text)
  local w, n = words(text), M.run_words
  for i = 1, #w - n + 1 do set[table.concat(w, " ", i, i + n - 1)] = true end
end

local function users(list, into)
  for _, msgs in ipairs(list) do into[#into + 1] = msgs[#msgs].content end
  return into
end

-- The training prompts of a task (its template boilerplate), user messages.
local function training_texts(task)
  local code, out = "void f(void) {}", users(prompts.fixed(task), {})
  for s = 1, prompts.ladder(task).count do
    users({prompts.write(s, task), prompts.improve(code, s, task), prompts.advance(code, s, task),
           prompts.repair(code, s, "an error", task), prompts.refine(code, "ok", task)}, out)
  end
  return out
end

-- The tasks whose held-out wordings are asked: matmul at its training sizes, every
-- training task of the suite at its size "train", in each ISA. The generated universe's
-- tasks (family universe_*, registered while a corpus is built) are pretraining material,
-- not the suite: no experiment asks them in a held-out wording.
function M.worded_tasks()
  local out = {}
  for _, isa in ipairs(M.isas) do
    for _, s in ipairs(M.matmul_training_sizes) do out[#out + 1] = {M = s, N = s, K = s, isa = isa} end
    for _, t in ipairs(tasks.list("train")) do
      if t.name ~= "matmul" and not t.family:match("^universe_") then
        out[#out + 1] = {name = t.name, size = "train", isa = isa}
      end
    end
  end
  return out
end

local wording_runs
-- The held-out runs of words: run -> the held-out sentence it comes from (first seen),
-- and, by first word, the runs' first words (to skip the text's other positions fast).
function M.wording_runs()
  if wording_runs then return wording_runs end
  local runs, first = {}, {}
  for _, task in ipairs(M.worded_tasks()) do
    local boiler = {}
    for _, text in ipairs(training_texts(task)) do add_runs(boiler, text) end
    for _, msgs in ipairs(prompts.reworded(task)) do
      local own = {}
      add_runs(own, msgs[#msgs].content)
      for r in pairs(own) do
        if not boiler[r] then runs[r] = true; first[r:match("^%S+")] = true end
      end
    end
  end
  wording_runs = {runs = runs, first = first}
  return wording_runs
end

-- The first held-out run of words in text, or nil.
function M.wording_in(text)
  local h, n = M.wording_runs(), M.run_words
  local w = words(text)
  for i = 1, #w - n + 1 do
    if h.first[w[i]] then
      local r = table.concat(w, " ", i, i + n - 1)
      if h.runs[r] then return r end
    end
  end
end

---------------------------------------------------------------------------------------
-- Tasks and sizes
---------------------------------------------------------------------------------------

-- Whether word is in text as a word (a plain search first: most texts lack it).
local function word_in(text, word)
  return text:find(word, 1, true) ~= nil and text:find("%f[%w_]" .. word:gsub("%p", "%%%0") .. "%f[^%w_]") ~= nil
end

local task_marks
-- What names a held-out task: {task =, what =, word = | text = } each.
local function marks()
  if task_marks then return task_marks end
  task_marks = {}
  local function add(name, what, key, value) task_marks[#task_marks + 1] = {task = name, what = what, [key] = value} end
  for _, t in ipairs(M.tasks()) do  -- the most specific first
    add(t.name, "its prototype", "text", (t.prototype:gsub(";%s*$", "")))
    add(t.name, "its statement", "text", t.statement)
    if t.entry ~= t.name then add(t.name, "its function " .. t.entry, "word", t.entry) end
    add(t.name, "its name", "word", t.name)
  end
  for _, t in ipairs(M.cuda_tasks()) do
    local name = "cuda:" .. t.name
    add(name, "its signature", "text", t.signature)
    add(name, "its statement", "text", t.statement)
    if t.entry ~= t.name then add(name, "its kernel " .. t.entry, "word", t.entry) end
    add(name, "its name", "word", t.name)
  end
  return task_marks
end

-- The first held-out task text names, as "NAME (what)".
function M.task_in(text)
  for _, m in ipairs(marks()) do
    if (m.word and word_in(text, m.word)) or (m.text and text:find(m.text, 1, true)) then
      return m.task .. " (" .. m.what .. ")"
    end
  end
end

local function sorted_vars(size, eq, sep)
  local parts = {}
  for k, v in pairs(size) do parts[#parts + 1] = k .. eq .. v end
  table.sort(parts)
  return table.concat(parts, sep)
end

local function digits_at(text, s)
  local i = 1
  while true do
    local a, b = text:find(s, i, true)
    if not a then return false end
    if not text:sub(b + 1, b + 1):match("%d") and not text:sub(a - 1, a - 1):match("[%w_]") then return true end
    i = a + 1
  end
end

-- The held-out size of ex's task its prompt or size shows, in words; nil if none.
-- matmul_sizes: the held-out M = N = K (default M.matmul_sizes).
function M.size_in(ex, text, matmul_sizes)
  local name = ex.task or "matmul"
  if name == "matmul" then
    local held = {}
    for _, s in ipairs(matmul_sizes or M.matmul_sizes) do held[s] = true end
    local size = type(ex.size) == "table" and ex.size or {}
    for _, d in ipairs({"M", "N", "K"}) do
      if held[size[d]] then return string.format("matmul %s = %d", d, size[d]) end
    end
    if text:find("matmul_optimized", 1, true) then
      for d, v in text:gmatch("%f[%w]([MNK]) = (%d+)") do
        if held[tonumber(v)] then return string.format("matmul %s = %s", d, v) end
      end
    end
    return nil
  end
  local cuda = name:match("^cuda:(.*)$")
  local spec = cuda and require("engine.cuda_tasks").get(cuda) or tasks.get(name)
  local held = spec.sizes.heldout
  if not held then return nil end
  if ex.size == "heldout" then return name .. " at its size heldout" end
  local words_ = cuda and sorted_vars(held, " = ", ", ") or tasks.size_text(held, " = ", ", ")
  if digits_at(text, words_) then return name .. " at its held-out size " .. words_ end
end

---------------------------------------------------------------------------------------
-- Overlaps
---------------------------------------------------------------------------------------

-- The user's message of an example.
local function prompt_of(ex)
  if ex.prompt then return ex.prompt:match("<|im_start|>user\n(.-)<|im_end|>") or ex.prompt end
  local msgs = ex.messages or {}
  return msgs[#msgs] and msgs[#msgs].content or ""
end

-- The prompts heldout.lua would ask with ex's own task, level, threads and ISA, for the
-- kinds found: the exact held-out prompt ex's is, in words, or nil.
local function exact_prompt(ex, text, found, matmul_sizes)
  local opt = text:match("compiled with %-(O%d)")
  local threads = tonumber(text:match("runs on (%d+) cores"))
  local name = ex.task or "matmul"
  if name:match("^cuda:") then return nil end
  local function with(changes)
    local t = {opt = opt, threads = threads}
    for k, v in pairs(changes) do t[k] = v end
    return t
  end
  for _, isa in ipairs(ex.isa and {ex.isa} or M.isas) do
    local own, lists = {isa = isa}, {}
    if name == "matmul" then
      local size = type(ex.size) == "table" and ex.size or {}
      local m, n, k = text:match("M = (%d+), N = (%d+), K = (%d+)")
      own.M, own.N, own.K = size.M or tonumber(m), size.N or tonumber(n), size.K or tonumber(k)
      if found.size then
        for _, s in ipairs(matmul_sizes or M.matmul_sizes) do
          lists[#lists + 1] = {"sizes", prompts.fixed(with{M = s, N = s, K = s, isa = isa})}
        end
      end
    else
      own.name, own.size = name, ex.size or "train"
      if found.size then lists[#lists + 1] = {"sizes", prompts.fixed(with{name = name, size = "heldout", isa = isa})} end
    end
    if found.wording then lists[#lists + 1] = {"wordings", prompts.reworded(with(own))} end
    if found.task and name ~= "matmul" and tasks.get(name).split == "heldout" then
      lists[#lists + 1] = {"tasks", prompts.fixed(with{name = name, size = "test", isa = isa})}
    end
    for _, l in ipairs(lists) do
      for i, msgs in ipairs(l[2]) do
        if msgs[#msgs].content == text then
          return string.format("%s part, %s prompt %d (%s)", l[1], name, i, isa)
        end
      end
    end
  end
end

-- The held-out items ex holds: {kind = what, ...} (kinds of M.kinds; each a line). opts:
-- matmul_sizes (the held-out M = N = K, default M.matmul_sizes), first (stop at the first
-- kind found; the exact prompt is then not looked for).
function M.overlaps(ex, opts)
  opts = opts or {}
  local text = prompt_of(ex)
  local all = text .. "\n" .. (ex.completion or "")
  local found = {}
  found.task = M.task_in(all)
  if opts.first and found.task then return found end
  found.size = M.size_in(ex, text, opts.matmul_sizes)
  if opts.first and found.size then return found end
  found.wording = M.wording_in(all)
  if opts.first or not next(found) then return found end
  found.prompt = exact_prompt(ex, text, found, opts.matmul_sizes)
  return found
end

-- Raises if ex holds a held-out item, naming it and `who` (the generator).
function M.check(ex, who)
  local found = M.overlaps(ex, {first = true})
  for _, kind in ipairs(M.kinds) do
    if found[kind] then
      error(string.format("%s: refused to emit a %s: %s", who, M.kind_names[kind], found[kind]), 0)
    end
  end
end

return M
