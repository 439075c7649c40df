-- The suite's tasks under drawn names (pretrain.lua --rename_share): at share 0 the corpus is
-- the one built before the option; at share 1 every matmul and suite-task example whose
-- prose does not use its function's name as a word asks for the function under a drawn name,
-- in the prototype and the answer alike, and nothing else of it changes; universe examples
-- keep theirs; the draws are many and reproducible, and audit.lua rebuilds such a corpus.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local tasks = require "engine.tasks"
local pretrain_corpus = require "pretrain_corpus"

local audit = dofile(engine.scripts[1] .. "/audit.lua")
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")

local settings, corpus, check_zero = pretrain_corpus.share_option(pretrain, "rename_share")

local function word(name) return "%f[%w_]" .. name:gsub("%p", "%%%0") .. "%f[^%w_]" end

t.test("--rename_share=0 leaves the corpus as it was, byte for byte", function() check_zero() end)

t.test("at share 1 the suite's tasks are asked under drawn names, in the prototype and the answer", function()
  local plain, all = corpus(nil), corpus(1)
  t.eq(#all, #plain)
  local renamed, kept, names = 0, 0, {}
  for i, p in ipairs(all) do
    local q = plain[i]
    t.eq({p.kind, p.task, p.isa}, {q.kind, q.task, q.isa})
    local spec = tasks.get(p.task)
    if spec.family:find("^universe_") then
      t.eq({p.prompt, p.completion}, {q.prompt, q.completion})  -- the universe's own names stay
    elseif p.prompt == q.prompt then
      kept = kept + 1  -- its prose uses the name as a word: left as it was
      t.eq(p.completion, q.completion)
    else
      renamed = renamed + 1
      t.ok(not p.prompt:find(word(spec.entry)), "no " .. spec.entry .. " left in the prompt")
      t.ok(not p.completion:find(word(spec.entry)), "no " .. spec.entry .. " left in the answer")
      -- the same text with the drawn name put back
      local drawn
      for w in p.prompt:gmatch("[%a_][%w_]*%s*%(") do
        local n = w:match("^[%a_][%w_]*")
        if p.completion:find(word(n)) and not q.prompt:find(word(n)) then drawn = n end
      end
      t.ok(drawn, "a drawn name in the prompt's prototype and the answer")
      t.eq(p.prompt:gsub(word(drawn), spec.entry), q.prompt)
      t.eq(p.completion:gsub(word(drawn), spec.entry), q.completion)
      names[drawn] = true
    end
  end
  t.ok(renamed >= 150, renamed .. " suite examples renamed of 180")
  t.ok(kept < renamed, kept .. " kept for their prose")
  local distinct = 0
  for _ in pairs(names) do distinct = distinct + 1 end
  t.ok(distinct >= renamed // 2, distinct .. " distinct names")
  t.eq(pretrain.build_corpus(settings(1)), all)  -- reproducible
end)

t.test("audit.lua rebuilds a model's corpus with its rename_share", function()
  local dir = pretrain_corpus.model_with(pretrain_corpus.recorded(settings(1)))
  t.eq(audit.settings(dir).rename_share, 1)
  local result = audit.model(dir)
  t.eq(result.status, "clean")
  t.contains(audit.text(result)[1], "100% of the suite's tasks under drawn names")
end)

t.test("the copy probe's tasks are axpy under other names, and nothing else changed", function()
  tasks.add_dir(engine.scripts[1] .. "/../../data/train/copy-probe-tasks")
  local axpy = tasks.get("axpy")
  for _, name in ipairs{"scale_add", "zorbel_kiv", "daxpy_v2"} do
    local probe = tasks.get(name)
    t.eq(probe.entry, name)
    t.eq(probe.prototype, (axpy.prototype:gsub("axpy", name)))
    t.eq(probe.reference, (axpy.reference:gsub("axpy", name)))
    t.eq({probe.statement, probe.sizes, probe.args, probe.bound}, {axpy.statement, axpy.sizes, axpy.args, axpy.bound})
    t.ok(not probe.yardsticks.openblas.source:find("%f[%w_]axpy%("), "the wrapper renamed")
  end
end)

t.test("general_model.sh passes RENAMES as --rename_share", function()
  t.contains(t.read(engine.scripts[1] .. "/../device/general_model.sh"), '--rename_share="${RENAMES:-0}"')
end)

t.run()
