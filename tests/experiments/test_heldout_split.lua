-- The held-out split of the suite is unseen: no pretraining example (kernelgen's corpus),
-- no template and no training prompt names a held-out task, its function or its words.
-- Likewise the held-out wordings (prompts.reworded, which heldout.lua asks): they demand
-- the same function and answer, and no training prompt and no pretraining example says
-- their framings or emphases.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local t = require "engine.test"
local tasks = require "engine.tasks"
local kernelgen = require "kernelgen"
local prompts = require "method.prompts"

local heldout = tasks.list("heldout")

local function keys(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  return out
end

-- What would betray a held-out task: its function's name as a word, its statement.
local function leaks(text)
  for _, task in ipairs(heldout) do
    if text:find("%f[%w_]" .. task.entry .. "%f[^%w_]") then return task.name .. " (its function " .. task.entry .. ")" end
    if text:find(task.statement, 1, true) then return task.name .. " (its statement)" end
  end
end

t.test("the suite holds out whole families", function()
  t.ok(#heldout >= 3, #heldout)
  local train_families = {}
  for _, task in ipairs(tasks.list("train")) do train_families[task.family] = true end
  for _, task in ipairs(heldout) do
    t.ok(not train_families[task.family], task.name .. "'s family " .. task.family .. " is also trained on")
    t.eq(task.sizes.train, nil, task.name .. " has a training size")
  end
end)

-- The pretraining corpus's examples as text (its prompts and completions), made once:
-- {seed =, index =, text =} each.
local corpus_texts
local function corpus()
  if corpus_texts then return corpus_texts end
  corpus_texts = {}
  for _, seed in ipairs({1, 2, 3}) do
    for i, ex in ipairs(kernelgen.corpus(400, {seed = seed})) do
      local text = ex.completion
      for _, m in ipairs(ex.messages) do text = text .. "\n" .. m.content end
      corpus_texts[#corpus_texts + 1] = {seed = seed, index = i, text = text}
    end
  end
  return corpus_texts
end

t.test("no pretraining example names a held-out task", function()
  for _, ex in ipairs(corpus()) do
    local leak = leaks(ex.text)
    t.ok(not leak, string.format("seed %d example %d names %s", ex.seed, ex.index, leak or ""))
  end
end)

-- The sentences that make the held-out wordings (prompts.reworded): the framings and,
-- for each task and ISA, the emphases.
local function reworded_sentences(task_list)
  local out = {}
  for _, f in ipairs(prompts.reworded_framings) do out[#out + 1] = f end
  for _, task in ipairs(task_list) do
    for _, isa in ipairs({"avx512", "avx2"}) do
      for _, e in ipairs(prompts.reworded_emphases(task, isa)) do out[#out + 1] = e end
    end
  end
  return out
end

-- Every training task (and the paper's matmul), for each ISA the prompts name.
local function training_tasks()
  local out = {}
  for _, isa in ipairs({"avx512", "avx2"}) do
    out[#out + 1] = {M = 256, N = 256, K = 256, isa = isa}
    for _, task in ipairs(tasks.list("train")) do out[#out + 1] = {name = task.name, size = "train", isa = isa} end
  end
  return out
end

t.test("the held-out wordings ask for the same function and answer, in other words", function()
  for _, task in ipairs(training_tasks()) do
    local fixed, reworded = prompts.fixed(task), prompts.reworded(task)
    t.eq(#reworded, #fixed, "as many as the fixed prompts")
    local signature = prompts.task_text(task):match("\n\n([^\n]+)\n\n")
    t.ok(signature and signature:find("(", 1, true), "the signature line of " .. (task.name or "matmul"))
    local framings = {}
    for i, m in ipairs(reworded) do
      local text = m[2].content
      t.ok(text:find("\n\n" .. signature .. "\n\n", 1, true), "reworded prompt " .. i .. " keeps the signature")
      t.ok(text:find("Answer with the complete C code in one ```c code block.", 1, true), "the answer format")
      t.ok(not text:find("Write a C function with exactly this signature:", 1, true), "the training framing")
      framings[text:match("^[^\n]*")] = true
      for j, f in ipairs(fixed) do t.ok(text ~= f[2].content, "reworded " .. i .. " is fixed " .. j) end
    end
    t.eq(#keys(framings), #prompts.reworded_framings, "each framing is used")
  end
end)

t.test("no training prompt and no pretraining example uses the held-out wordings", function()
  local all = training_tasks()
  local sentences = reworded_sentences(all)
  t.ok(#sentences >= #prompts.reworded_framings + 8)
  local function uses(text)
    for _, s in ipairs(sentences) do if text:find(s, 1, true) then return s end end
  end
  local code = "void f(void) {}"
  for _, task in ipairs(all) do
    local lists = {prompts.fixed(task)}
    for s = 1, prompts.ladder(task).count do
      lists[#lists + 1] = {prompts.write(s, task), prompts.improve(code, s, task), prompts.advance(code, s, task),
                           prompts.repair(code, s, "an error", task)}
    end
    for _, list in ipairs(lists) do
      for _, msgs in ipairs(list) do
        local used = uses(msgs[2].content)
        t.ok(not used, (task.name or "matmul") .. "'s training prompt says: " .. (used or ""))
      end
    end
  end
  for _, ex in ipairs(corpus()) do
    local used = uses(ex.text)
    t.ok(not used, string.format("seed %d example %d says: %s", ex.seed, ex.index, used or ""))
  end
end)

t.test("no training prompt and no file of the pretraining or templates names one", function()
  for _, task in ipairs(tasks.list("train")) do
    for _, m in ipairs(prompts.fixed({name = task.name, size = "train"})) do
      t.ok(not leaks(m[2].content), task.name .. "'s prompt names a held-out task")
    end
  end
  for _, m in ipairs(prompts.fixed({M = 256, N = 256, K = 256})) do t.ok(not leaks(m[2].content)) end
  local root = engine.scripts[1] .. "/.."
  local files = {"pretraining/kernelgen.lua", "pretraining/tiny_model.lua", "experiments/templates.lua",
                 "experiments/pretrain.lua"}
  local p = io.popen("cd " .. root .. " && find pretraining/kernelgen -name '*.lua' | sort")
  for name in p:lines() do files[#files + 1] = name end
  p:close()
  t.ok(#files > 4, "kernelgen's parts are read too")
  for _, file in ipairs(files) do
    local f = io.open(root .. "/" .. file)
    if f then
      local text = f:read("a")
      f:close()
      t.ok(not leaks(text), file .. " names " .. (leaks(text) or ""))
    end
  end
end)

t.test("the generated universe's tasks are no part of the held-out wordings", function()
  local split = require "method.heldout_split"
  local universe = require "universe"
  local before = #split.worded_tasks()
  tasks.add_dir(universe.write_dir(universe.draw(5, 30), t.tmpdir() .. "/u"))
  t.ok(#tasks.list("train") >= 30, "the universe's tasks are registered")
  t.eq(#split.worded_tasks(), before)
  for _, w in ipairs(split.worded_tasks()) do t.ok(not (w.name or ""):match("^u%d+_"), w.name) end
end)

t.run()
