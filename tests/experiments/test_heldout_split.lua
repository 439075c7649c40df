-- The held-out split of the suite is unseen: no pretraining example (kernelgen's corpus),
-- no template and no training prompt names a held-out task, its function or its words.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local t = require "engine.test"
local tasks = require "engine.tasks"
local kernelgen = require "kernelgen"
local prompts = require "prompts"

local heldout = tasks.list("heldout")

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

t.test("no pretraining example names a held-out task", function()
  for _, seed in ipairs({1, 2, 3}) do
    for i, ex in ipairs(kernelgen.corpus(400, {seed = seed})) do
      local text = ex.completion
      for _, m in ipairs(ex.messages) do text = text .. "\n" .. m.content end
      local leak = leaks(text)
      t.ok(not leak, string.format("seed %d example %d names %s", seed, i, leak or ""))
    end
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

t.run()
