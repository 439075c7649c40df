-- Prompts in drawn words (scripts/pretraining/wordings.lua, pretrain.lua --wording_share):
-- at share 0 the corpus is the one built before the option; at share 1 every prompt opens
-- with a drawn framing, every fixed prompt carries a drawn emphasis and everything else of
-- the prompt is as it was (stage rules included); the draws are many and reproducible; and
-- no drawn word is a held-out wording: never one of prompts.reworded's sentences, and no
-- framing or emphasis, over every task the held-out wordings ask, holds a run of words the
-- split (heldout_split.lua) holds out.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local pretrain_corpus = require "pretrain_corpus"
local prompts = require "method.prompts"
local rng_of = require("engine.rng").new
local split = require "method.heldout_split"
local wordings = require "wordings"

local audit = dofile(engine.scripts[1] .. "/audit.lua")
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")

local function user_of(pair) return pair.prompt:match("<|im_start|>user\n(.-)<|im_end|>") end
local function first_line(text) return text:match("^[^\n]*") end
local function after_first(text) return text:match("^[^\n]*(.*)$") end
-- The paragraph before the answer format, and the text around it.
local function emphasis_of(text)
  local head, para, tail = text:match("^(.*\n\n)([^\n]+)(\n\n[^\n]+)$")
  return para, head, tail
end

-- Whether a line is a framing composed of wordings.composed's pieces (version 4).
local function composed(line)
  local c = wordings.composed
  for _, lead in ipairs(c.leads) do
    for _, object in ipairs(c.objects) do
      for _, link in ipairs(c.links) do
        local start = lead .. " " .. object .. " " .. link
        if line:sub(1, #start) == start and line:sub(-1) == ":" then return true end
      end
    end
  end
  return false
end

-- The corpus without the option, and at share 1 (built once, in the tests: a drawn
-- wording the split holds out raises there, failing the test).
local settings, corpus, check_zero = pretrain_corpus.share_option(pretrain, "wording_share")

t.test("--wording_share=0 leaves the corpus as it was, byte for byte", function()
  for _, p in ipairs(check_zero()) do t.eq(first_line(user_of(p)), wordings.standard) end
end)

t.test("at share 1 every prompt opens with a drawn framing and every fixed prompt has a drawn emphasis", function()
  local plain, all = corpus(nil), corpus(1)
  t.eq(#all, #plain)
  local kinds, framings, known = {}, {}, {}
  for _, f in ipairs(wordings.framings) do known[f] = true end
  for i, p in ipairs(all) do
    local a, b = user_of(plain[i]), user_of(p)
    t.eq({p.completion, p.kind, p.task}, {plain[i].completion, plain[i].kind, plain[i].task})
    kinds[p.kind] = (kinds[p.kind] or 0) + 1
    framings[first_line(b)] = true
    t.ok(known[first_line(b)] or composed(first_line(b)), "a framing of wordings.framings or a composed one: "
         .. first_line(b))
    local para_a, head_a, tail_a = emphasis_of(after_first(a))
    local para_b, head_b, tail_b = emphasis_of(after_first(b))
    -- the prototype, statement, sizes and answer format as they were
    t.eq({head_b, tail_b}, {head_a, tail_a}, "example " .. i)
    t.eq(b:match("\n\n([^\n]+)\n"), a:match("\n\n([^\n]+)\n"), "the prototype of example " .. i)
    if p.kind == "fixed" then
      t.ne(para_b, para_a, "the emphasis of example " .. i)
      for _, matmul in ipairs({true, false}) do
        t.eq(wordings.fixed_list(para_b, rng_of(1), matmul), nil, "a fixed emphasis left in example " .. i)
      end
    else
      t.eq(after_first(b), after_first(a), "a " .. p.kind .. " prompt past its framing")
      t.ok(b:find("\n\nStage %d+ of %d+: "), "the stage rules of a " .. p.kind .. " prompt")
    end
  end
  for _, kind in ipairs({"fixed", "write", "improve", "advance", "repair"}) do
    t.ok((kinds[kind] or 0) > 0, "the corpus has " .. kind .. " prompts")
  end
  local n = 0
  for _ in pairs(framings) do n = n + 1 end
  t.ok(n >= 10, n .. " framings")
end)

t.test("a share draws that share of the prompts, the same from the same seed", function()
  local plain, half = corpus(nil), pretrain.build_corpus(settings(0.5))
  t.eq(pretrain.build_corpus(settings(0.5)), half)
  local changed = 0
  for i, p in ipairs(half) do
    if p.prompt ~= plain[i].prompt then changed = changed + 1 end
  end
  t.ok(changed > 0.4 * #half and changed < 0.6 * #half, changed .. " of " .. #half .. " changed")
end)

-- The fixed prompts of the tasks the held-out wordings ask, in the corpus's ISAs (first:
-- each task's first only).
local function fixed_prompts(first)
  local out = {}
  for _, task in ipairs(split.worded_tasks()) do
    if task.isa == "avx512" or task.isa == "avx2" then
      for i, msgs in ipairs(prompts.fixed(task)) do
        if i == 1 or not first then out[#out + 1] = {task = task, text = msgs[#msgs].content} end
      end
    end
  end
  return out
end

-- Whether text holds a literal piece (12 characters or more) of a held-out sentence.
local heldout_pieces = {}
for _, list in ipairs({prompts.reworded_framings, prompts.reworded_templates, prompts.reworded_task_templates}) do
  for _, sentence in ipairs(list) do
    for piece in (sentence:gsub("{%u+}", "\0")):gmatch("[^%z]+") do
      if #piece >= 12 then heldout_pieces[#heldout_pieces + 1] = piece end
    end
  end
end
local function heldout_piece(text)
  for _, piece in ipairs(heldout_pieces) do
    if text:find(piece, 1, true) then return piece end
  end
end

t.test("2000 draws: many framings and emphases, none of them held out", function()
  local list, rng = fixed_prompts(), rng_of(11)
  local framings, emphases, nf, ne = {}, {}, 0, 0
  for i = 1, 2000 do
    local p = list[(i * 7) % #list + 1]
    local ex = {task = p.task.name or "matmul", size = p.task.name and p.task.size or p.task, isa = p.task.isa}
    local text = wordings.vary(p.text, rng)
    local f, e = first_line(text), emphasis_of(text)
    if not framings[f] then framings[f], nf = true, nf + 1 end
    if not emphases[e] then emphases[e], ne = true, ne + 1 end
    for _, r in ipairs(prompts.reworded_framings) do t.ne(f, r) end
    for _, r in ipairs(prompts.reworded_emphases(p.task)) do t.ne(e, r) end
    t.eq(heldout_piece(text), nil, text)
    ex.messages = {{role = "user", content = text}}
    split.check(ex, "test_wordings")
    -- the check sees a held-out framing in the same text
    ex.messages = {{role = "user", content = prompts.reworded_framings[i % 4 + 1] .. after_first(text)}}
    if i <= 20 then t.raises(function() split.check(ex, "test_wordings") end, "held-out wording") end
  end
  t.ok(nf >= 10, nf .. " framings")
  t.ok(ne >= 100, ne .. " emphases")
  -- and the corpus's own draws pass the check
  for _, p in ipairs(corpus(1)) do split.check(p, "test_wordings") end
end)

t.test("no framing and no emphasis the pieces compose holds a held-out run of words", function()
  local seen, n = {}, 0
  for _, p in ipairs(fixed_prompts(true)) do
    local rest = after_first(p.text)
    local para, head, tail = emphasis_of(p.text)
    -- a task's list, or a few of matmul's drawn ones
    local lists = {}
    for s = 1, p.task.name and 1 or 8 do lists[s] = wordings.fixed_list(para, rng_of(s), not p.task.name) end
    for _, f in ipairs(wordings.framings) do
      t.eq(split.wording_in(f .. rest), nil, f)
    end
    -- each list once with the text before it (a run reaches 7 words across)
    for _, list in ipairs(lists) do
      local key = list .. "\0" .. head:sub(-160)
      if not seen[key] then
        seen[key] = true
        for _, o in ipairs(wordings.openers) do
          for _, j in ipairs(wordings.joiners) do
            for _, c in ipairs(wordings.closers) do
              local e = o .. j:gsub("{LIST}", function() return list end) .. c
              t.eq(split.wording_in(head .. e .. tail), nil, e)
              n = n + 1
            end
          end
        end
      end
    end
  end
  t.ok(n >= 10000, n .. " emphases checked")
  -- the check itself finds a held-out emphasis in the same place
  local p = fixed_prompts()[1]
  local _, head, tail = emphasis_of(p.text)
  t.ok(split.wording_in(head .. prompts.reworded_emphases(p.task)[1] .. tail), "a held-out emphasis")
end)

t.test("composed framings: many, none holding a held-out framing's words or a held-out run", function()
  local c = wordings.composed
  -- no piece holds a word only the held-out framings use, and nothing a framing can end with
  -- is a held-out framing's last word (a run of 8 words would reach into the prototype)
  local own = {"routine", "declared", "declaration", "definition", "implement", "rename", "body", "job"}
  for _, list in ipairs({c.leads, c.objects, c.links, c.clauses, c.parts, c.asides}) do
    for _, piece in ipairs(list) do
      for _, word in ipairs(own) do t.eq(piece:lower():find(word, 1, true), nil, piece) end
    end
  end
  local last = {given = true, is = true, parameters = true, declaration = true}
  for _, list in ipairs({c.links, c.clauses, c.asides}) do
    for _, piece in ipairs(list) do
      local word = piece:gsub("{%u+}", "zorbel"):match("(%a+)%W*$")
      t.eq(last[word], nil, piece)
    end
  end
  -- 3000 drawn, before the rest of fixed prompts of the tasks the held-out wordings ask
  local list, rng, seen, n = fixed_prompts(true), rng_of(17), {}, 0
  for i = 1, 3000 do
    local f = wordings.compose_framing(rng)
    t.ok(composed(f), f)
    if not seen[f] then seen[f], n = true, n + 1 end
    local text = f .. after_first(list[i % #list + 1].text)
    t.eq(split.wording_in(text), nil, text)
    t.eq(heldout_piece(text), nil, text)
  end
  t.ok(n >= 2500, n .. " distinct framings of 3000")
end)

t.test("vary leaves other texts alone and recovers a task's technique list", function()
  local rng = rng_of(3)
  local other = "Write something else.\n\nMake the loads contiguous: OpenMP.\n\n" .. wordings.answer_format
  t.eq(wordings.vary(other, rng), other)
  local write = prompts.write(2, {name = "axpy", size = "train", isa = "avx2"})[2].content
  t.eq(after_first(wordings.vary(write, rng)), after_first(write))
  -- every emphasis of a task carries the list its first one does
  for _, task in ipairs({{name = "axpy", size = "train", isa = "avx2"}, {name = "gemv_n", size = "train", isa = "avx512"}}) do
    local all_ = prompts.task_emphases(task)
    local list = all_[1]:match("^Use every technique that helps: (.*)%.$")
    t.contains(list, " SIMD intrinsics")
    for _, e in ipairs(all_) do t.eq(wordings.fixed_list(e, rng), list, e) end
  end
  for _, e in ipairs(prompts.emphases("avx2")) do
    local list = wordings.fixed_list(e, rng, true)
    t.contains(list, "AVX2/FMA")
    t.eq(select(2, list:gsub(",", "")) + select(2, list:gsub(" and ", "")), 4, list)  -- five techniques
  end
  t.eq(wordings.fixed_list("Stage 2 of 5: you may use OpenMP parallelisation.", rng), nil)
  t.eq(wordings.fixed_list(prompts.task_emphases({name = "axpy", size = "train"})[1], rng, true), nil)
end)

t.test("audit.lua rebuilds a model's corpus with its wording_share", function()
  local s = pretrain_corpus.recorded(settings(1))
  local dir = pretrain_corpus.model_with(s)
  t.eq(audit.settings(dir).wording_share, 1)
  local result = audit.model(dir)
  t.eq(result.status, "clean")
  t.contains(audit.text(result)[1], "100% of the prompts in drawn words")
  s.wording_share = nil
  pretrain_corpus.model_with(s, dir)
  t.eq(audit.settings(dir).wording_share, 0)
end)

t.test("each version's framings stay as they were; version 2 never says signature, version 3 names the parts", function()
  t.eq(wordings.version, 4)
  local v1, v2, v3, v4 = wordings.framings_of(1), wordings.framings_of(2), wordings.framings_of(3), wordings.framings_of(4)
  t.eq({#v1, #v2, #v3}, {16, 24, 32})
  t.eq(v4, v3)  -- version 4 lists nothing new: it composes
  t.eq(v4, wordings.framings)
  t.eq({table.unpack(v2, 1, 16)}, v1)
  t.eq({table.unpack(v3, 1, 24)}, v2)
  t.raises(function() wordings.framings_of(5) end, "no version 5")
  local added = {[2] = {}, [3] = {}}
  for i = 17, 24 do
    t.eq(v2[i]:find("signature"), nil, v2[i])
    added[2][v2[i]] = true
  end
  for i = 25, 32 do
    t.ok(v3[i]:find("name") and (v3[i]:find("type") or v3[i]:find("parameter")), v3[i])
    added[3][v3[i]] = true
  end
  -- a draw never takes a later version's framing; the current version draws the added ones
  local text = prompts.task_text({name = "axpy", size = "train", isa = "avx2"})
  local listed = {}
  for v = 1, 3 do
    listed[v] = {}
    for _, f in ipairs(wordings.framings_of(v)) do listed[v][f] = true end
  end
  local later1, later2, later3, new2, new3, new4 = 0, 0, 0, 0, 0, 0
  local rng1, rng2, rng3, rng4 = rng_of(5), rng_of(5), rng_of(5), rng_of(5)
  for _ = 1, 400 do
    local f1, f2, f3 = first_line(wordings.vary(text, rng1, 1)), first_line(wordings.vary(text, rng2, 2)),
                       first_line(wordings.vary(text, rng3, 3))
    local f4 = first_line(wordings.vary(text, rng4))
    if not listed[1][f1] then later1 = later1 + 1 end
    if not listed[2][f2] then later2 = later2 + 1 end
    if not listed[3][f3] then later3 = later3 + 1 end
    if added[2][f2] then new2 = new2 + 1 end
    if added[3][f3] then new3 = new3 + 1 end
    if not listed[3][f4] and composed(f4) then new4 = new4 + 1 end
  end
  t.eq({later1, later2, later3}, {0, 0, 0})
  t.ok(new2 >= 80 and new3 >= 60, new2 .. " and " .. new3 .. " of 400 draws from the added framings")
  t.ok(new4 >= 160 and new4 <= 240, new4 .. " of 400 draws of version 4 composed")
end)

t.test("a run records its framings' version; audit.lua rebuilds an older model at version 1", function()
  t.eq(pretrain.identity(settings(0.5)).wording_version, 4)
  t.eq(pretrain.identity(settings(0)).wording_version, nil)  -- no drawn words, no version
  local s1 = settings(0.5)
  s1.wording_version = 1
  t.eq(pretrain.identity(s1).wording_version, nil)  -- as a run made before versions was recorded
  -- a version-1 corpus draws version 1's framings only, and differs from version 2's
  local v1, v2 = pretrain.build_corpus(s1), corpus(0.5)  -- v2: the current version's
  local known, differs = {}, false
  for _, f in ipairs(wordings.framings_of(1)) do known[f] = true end
  for i, p in ipairs(v1) do
    t.ok(known[first_line(user_of(p))], first_line(user_of(p)))
    differs = differs or p.prompt ~= v2[i].prompt
  end
  t.ok(differs, "version 4 drew other framings somewhere")
  local s = pretrain_corpus.recorded(settings(0.5))
  local dir = pretrain_corpus.model_with(s)
  t.eq(audit.settings(dir).wording_version, 1)  -- recorded before versions: 1
  s.wording_version = 2
  pretrain_corpus.model_with(s, dir)
  t.eq(audit.settings(dir).wording_version, 2)
  s.wording_version = 5
  pretrain_corpus.model_with(s, dir)
  local ok, why = audit.settings(dir)
  t.eq(ok, nil)
  t.contains(why, "framings of version 5, newer than this tree's (4)")
end)

t.test("general_model.sh passes WORDINGS as --wording_share", function()
  local script = t.read(engine.scripts[1] .. "/../device/general_model.sh")
  t.contains(script, '--wording_share="${WORDINGS:-0}"')
  t.contains(script, "WORDINGS")
end)

t.run()
