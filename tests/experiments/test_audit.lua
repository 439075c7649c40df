-- Held out means unseen: the split (heldout_split.lua) is what heldout.lua asks; the
-- pretraining generators draw none of it and refuse to emit it, naming the item; audit.lua
-- rebuilds a model's corpus from its pretrain.json, finds the shipped settings clean and a
-- planted overlap of each kind by its kind, and calls a model without pretrain.json
-- "corpus unknown"; heldout.lua refuses a contaminated model unless --allow_contaminated,
-- and labels its results by what the audit found.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local fakes = require "fakes"
local primitives = require "primitives"
local model_with = require("pretrain_corpus").model_with
local kernelgen = require "kernelgen"
local prompts = require "method.prompts"
local split = require "method.heldout_split"
local tasks = require "engine.tasks"

local audit = dofile(engine.scripts[1] .. "/audit.lua")
local heldout = dofile(engine.scripts[1] .. "/heldout.lua")
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")

-- A shipped model's recorded settings, with a smaller corpus and the given version.
local function shipped(name, examples, version)
  local s = json.read(engine.models .. "/" .. name .. "/pretrain.json").settings
  s.examples, s.corpus_version = examples, version
  return s
end

t.test("the split is what heldout.lua asks", function()
  t.eq(split.matmul_sizes, {192, 384}, "Experiment 1's and Table II's held-out sizes")
  t.eq(heldout.heldout_size(128), 192)
  t.eq(heldout.heldout_size(256), 384)
  local names = {}
  for _, task in ipairs(split.tasks()) do names[#names + 1] = task.name end
  t.eq(names, {"cholesky", "conv1d", "conv2d_3x3", "fft", "lu_nopiv"})
  t.eq(split.task_size("axpy"), tasks.get("axpy").sizes.heldout)
  t.eq(split.wordings, prompts.reworded)
  -- every held-out framing and emphasis has runs of words no training prompt has: one
  -- copied into the training templates would show here
  local runs = split.wording_runs().runs
  local function has_run(sentence)
    local w = {}
    for x in sentence:gmatch("%S+") do w[#w + 1] = x end
    for i = 1, #w - split.run_words + 1 do
      if runs[table.concat(w, " ", i, i + split.run_words - 1)] then return true end
    end
    return false
  end
  for _, f in ipairs(prompts.reworded_framings) do t.ok(has_run(f), f) end
  for _, e in ipairs(prompts.reworded_emphases({M = 128, N = 128, K = 128, isa = "avx512"})) do t.ok(has_run(e), e) end
  for _, e in ipairs(prompts.reworded_emphases({name = "axpy", size = "train", isa = "avx2"})) do t.ok(has_run(e), e) end
end)

t.test("the generators draw no held-out size and refuse one, naming it", function()
  local old = kernelgen.corpus(300, {seed = 3, version = 1, check = false})
  local new = kernelgen.corpus(300, {seed = 3})
  local had = 0
  for i, ex in ipairs(old) do
    local held = false
    for _, d in ipairs({"M", "N", "K"}) do
      held = held or ex.task[d] == 192 or ex.task[d] == 384
      t.ok(new[i].task[d] ~= 192 and new[i].task[d] ~= 384, "example " .. i .. " draws a held-out size")
    end
    had = had + (held and 1 or 0)
    if not held then  -- the same seed gives the same corpus but where version 1 drew one
      t.eq(new[i].messages, ex.messages, "example " .. i)
      t.eq(new[i].completion, ex.completion, "example " .. i)
    end
  end
  t.ok(had > 20, had)
  t.raises(function() kernelgen.corpus(300, {seed = 3, version = 1}) end,
           "kernelgen.example: refused to emit a held-out size: matmul")
  t.raises(function()
    kernelgen.example(kernelgen.rng(1), {kind = "write", task = {M = 256, N = 384, K = 256}})
  end, "refused to emit a held-out size: matmul N = 384")
  t.raises(function()
    require("kernelgen.cuda").example(kernelgen.rng(1), {task = "softmax_rows", size = "heldout"})
  end, "kernelgen.cuda.example: refused to emit a held-out size: cuda:softmax_rows at its size heldout")
  local ok = kernelgen.example(kernelgen.rng(1), {kind = "write", task = {M = 256, N = 384, K = 256}, check = false})
  t.ok(ok.messages, "check = false emits it (audit.lua's rebuilds)")
end)

t.test("the shipped generators at the shipped settings give a corpus the audit finds clean", function()
  for _, name in ipairs({"small", "small-cuda"}) do
    local r = audit.model(model_with(shipped(name, 500, kernelgen.corpus_version)))
    t.eq(r.status, "clean", name .. ": " .. table.concat(audit.text(r), "\n"))
    t.eq(r.examples, 500)
    t.ok((r.tasks.suite or 0) > 0 and r.tasks.matmul > 0, name)
    if name == "small-cuda" then t.ok((r.tasks.cuda or 0) > 0) end
    for _, kind in ipairs(split.kinds) do t.eq(r.kinds[kind].count, 0, name .. " " .. kind) end
    -- the version the shipped models were made with draws the held-out sizes
    local old = audit.model(model_with(shipped(name, 500, 1)))
    t.eq(old.status, "overlaps")
    t.ok(old.kinds.size.count > 0 and old.kinds.prompt.count > 0, audit.counts_text(old))
    t.eq(old.kinds.wording.count + old.kinds.task.count, 0, audit.counts_text(old))
  end
  -- the shipped models' own records
  for _, name in ipairs({"small", "small-cuda"}) do
    local s = audit.settings(engine.models .. "/" .. name)
    t.ok(s, name .. " records its corpus")
    t.eq(s.corpus_version, kernelgen.corpus_version, name .. " is pretrained on the clean corpus")
  end
end)

t.test("a corpus with the generated universe is rebuilt at the universe's version, and only then", function()
  local universe = require "universe"
  local s = shipped("small", 300, kernelgen.corpus_version)
  s.universe_share, s.universe_version = 0.4, universe.version
  local r = audit.model(model_with(s))
  t.eq(r.status, "clean", table.concat(audit.text(r), "\n"))
  t.eq(r.tasks.universe, 120)
  t.contains(audit.text(r)[1], "120 of the generated universe at version " .. universe.version)
  -- what pretrain.lua records: the version, only where the universe is in the corpus
  t.eq(pretrain.identity({examples = 10, seed = 1, universe_share = 0.5}).universe_version, universe.version)
  t.eq(pretrain.identity({examples = 10, seed = 1, universe_share = 0}).universe_version, nil)
  -- another version's corpus, or one from before versions were recorded, cannot be rebuilt
  s.universe_version = universe.version - 1
  local other = audit.model(model_with(s))
  t.eq(other.status, "unknown")
  t.contains(other.reason, "version " .. (universe.version - 1))
  s.universe_version = nil
  t.contains(audit.model(model_with(s)).reason, "a version before they were recorded")
end)

-- The corpus as text, one example after another.
local function corpus_text(corpus)
  local parts = {}
  for i, p in ipairs(corpus) do parts[#parts + 1] = i .. "\n" .. p.prompt .. "\n" .. p.completion end
  return table.concat(parts, "\n")
end

t.test("the corpus regenerates exactly in another process: the audit rebuilds what was trained", function()
  -- Lua seeds its string hashes per process, so any draw made in pairs() order would
  -- differ between the run that trained and the audit (odd sizes once did).
  local settings = {examples = 1500, task_share = 0.5, cuda_share = 0.2, seed = 3,
                    isa = {"avx512", "avx2"}, defect_rate = 0.3}
  local dir = t.tmpdir()
  local script = io.open(dir .. "/corpus.lua", "w")
  script:write(string.format([[
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
local c = pretrain.build_corpus(json.decode(%q))
local parts = {}
for i, p in ipairs(c) do parts[#parts + 1] = i .. "\n" .. p.prompt .. "\n" .. p.completion end
local f = io.open(arg[1], "w")
f:write(table.concat(parts, "\n"))
f:close()
]], json.encode(settings)))
  script:close()
  local here_text = corpus_text(pretrain.build_corpus(settings))
  for run = 1, 2 do
    local path = string.format("%s/corpus-%d.txt", dir, run)
    local out, ok = primitives.engine(dir .. "/corpus.lua", path)
    t.ok(ok, out)
    local f = assert(io.open(path))
    local there = f:read("a")
    f:close()
    t.ok(there == here_text, "process " .. run .. " rebuilt another corpus")
  end
end)

t.test("no odd size a repair example draws is a held-out size of its task", function()
  -- Odd sizes move each even train size by -3, -1, 1 or 3, so every realisation of them
  -- (whatever order the draws took) stays clear of the held-out sizes.
  local offsets = {-3, -1, 1, 3}
  local checked = 0
  for _, spec in ipairs(tasks.list()) do
    local train, held = spec.sizes.train, spec.sizes.heldout
    if train and held then
      local reachable = true
      for k, h in pairs(held) do
        local v, hit = train[k], false
        if v == h then hit = true end
        if v and v % 2 == 0 then
          for _, o in ipairs(offsets) do hit = hit or math.max(3, v + o) == h end
        end
        reachable = reachable and hit
      end
      t.ok(not reachable, spec.name .. "'s held-out size is an odd size of its train size")
      checked = checked + 1
    end
  end
  t.ok(checked >= 20, "tasks with a held-out size: " .. checked)
end)

t.test("a planted overlap of each kind is caught, by its kind", function()
  local corpus = pretrain.build_corpus({examples = 40, task_share = 0.25, cuda_share = 0.2, seed = 2,
                                        isa = {"avx512", "avx2"}, defect_rate = 0.15})
  local clean = audit.audit_pairs(corpus)
  for _, kind in ipairs(split.kinds) do t.eq(clean[kind].count, 0, kind) end
  local code = "```c\nvoid f(void) {}\n```"
  local function user(msgs) return msgs[#msgs].content end
  local function plant(p)
    p.completion = p.completion or code
    p.prompt = p.prompt or prompts.render({{role = "system", content = prompts.system}, {role = "user", content = p.text}})
    corpus[#corpus + 1] = p
    return #corpus
  end
  local m128 = {M = 128, N = 128, K = 128, isa = "avx512"}
  local planted = {
    -- E1's held-out prompt, byte for byte: an exact prompt, at a held-out size
    exact = plant{task = "matmul", isa = "avx512", prompt = prompts.render(prompts.fixed({M = 192, N = 192, K = 192, isa = "avx512"})[3])},
    -- a write prompt with one dimension held out, found in its text (no size given)
    size = plant{task = "matmul", text = user(prompts.write(2, {M = 256, N = 384, K = 256, isa = "avx2"}))},
    -- a task of the suite at its size "heldout", in the words of its prompt
    task_size = plant{task = "axpy", text = user(prompts.write(2, {name = "axpy", size = "heldout", isa = "avx2"}))},
    -- a training prompt with one held-out emphasis in place of its own
    wording = plant{task = "matmul", isa = "avx512", text = user(prompts.fixed(m128)[1]):gsub(
      prompts.emphases("avx512")[1]:gsub("%p", "%%%0"), (prompts.reworded_emphases(m128)[2]:gsub("%%", "%%%%")))},
    -- a held-out wording prompt, byte for byte
    reworded = plant{task = "matmul", isa = "avx512", text = user(prompts.reworded(m128)[5])},
    -- a held-out task's prototype in an answer, and a CUDA one's statement in a prompt
    task = plant{task = "matmul", text = user(prompts.fixed(m128)[2]),
                 completion = "```c\n" .. tasks.get("fft").prototype .. " {}\n```"},
    cuda = plant{task = "cuda:sum_rows", text = require("engine.cuda_tasks").get("gelu_tanh").statement},
  }
  local found = audit.audit_pairs(corpus, {show = 10})
  local function at(kind)
    local list = {}
    for _, e in ipairs(found[kind].examples) do list[#list + 1] = e.index end
    return list
  end
  t.eq(at("prompt"), {planted.exact, planted.reworded})
  t.eq(at("size"), {planted.exact, planted.size, planted.task_size})
  t.eq(at("wording"), {planted.wording, planted.reworded})
  t.eq(at("task"), {planted.task, planted.cuda})
  t.contains(found.size.examples[2].item, "matmul N = 384")
  t.contains(found.size.examples[3].item, "axpy at its held-out size n = 3000017")
  t.contains(found.prompt.examples[1].item, "sizes part, matmul prompt 3 (avx512)")
  t.contains(found.prompt.examples[2].item, "wordings part, matmul prompt 5 (avx512)")
  t.contains(found.task.examples[1].item, "fft (its prototype)")
  t.contains(found.task.examples[2].item, "cuda:gelu_tanh (its statement)")
end)

t.test("a model without pretrain.json is corpus unknown, never clean", function()
  local r = audit.model(t.tmpdir())
  t.eq(r.status, "unknown")
  t.contains(table.concat(audit.text(r), "\n"), "corpus unknown (no pretrain.json")
  local text, ok = primitives.engine("audit.lua", t.tmpdir(), "--json")
  t.ok(ok, text)
  t.eq(json.decode(text).status, "unknown")
end)

-- Experiment 1 on the stand-ins with a model directory: matmul at size 32, lr = 0 and a
-- learner, seed 1.
local function exp1_runs(model)
  local out = t.tmpdir()
  exp1.run(primitives.parse(exp1, "experiment1", {"--out=" .. out, "--profile=paper", "--G=2", "--steps=1",
                                                  "--prompts_per_step=1", "--size=32", "--opt=O3", "--beta=0.0",
                                                  "--lr=0.0,5e-7", "--seeds=1", "--model=" .. model}), fakes.deps())
  return out
end

-- What fn writes to io.stdout.
local function capture(fn)
  local parts, saved = {}, io.stdout
  io.stdout = {write = function(self, ...)
    for _, x in ipairs({...}) do parts[#parts + 1] = tostring(x) end
    return self
  end}
  local ok, err = pcall(fn)
  io.stdout = saved
  if not ok then error(err, 0) end
  return table.concat(parts)
end

-- The stand-ins with the real audit.
local function audited_deps()
  local deps = fakes.deps()
  deps.audit = nil
  return deps
end

t.test("heldout.lua refuses a model pretrained on the held-out split, and labels what it compares", function()
  local dirty = model_with({seed = 1, examples = 150, isa = {"avx512", "avx2"}, defect_rate = 0.15})
  local out = exp1_runs(dirty)
  local opts = {G = 0, device = "cpu", heldout_tasks = "none"}
  local counts = audit.counts_text(audit.model(dirty, {matmul_sizes = {192, 384, 48}}))
  t.contains(counts, "held-out size ")
  t.raises(function() heldout.compare(out, opts, audited_deps()) end,
           dirty .. " was pretrained on items of the held-out split (" .. counts)
  t.raises(function() heldout.compare(out, opts, audited_deps()) end, "--allow_contaminated compares anyway")
  -- the training prompts are no held-out claim
  heldout.compare(out, {G = 0, device = "cpu", prompts = "train"}, audited_deps())
  opts.allow_contaminated = true
  local _, _, raw = heldout.compare(out, opts, audited_deps())
  t.eq(raw.label, "held-out parts seen in pretraining")
  t.eq(raw.audit.models[1].status, "overlaps")
  t.eq(raw.audit.models[1].split.matmul_sizes, {192, 384, 48}, "the size asked here is looked for too")

  local file = t.tmpdir() .. "/heldout.json"
  local unknown = exp1_runs(t.tmpdir())
  local text = capture(function()
    heldout.main({[0] = "heldout.lua", unknown, "--out=" .. file, "--heldout_tasks=none"}, audited_deps())
  end)
  t.contains(text, "Held out: not proven unseen: the model's pretraining corpus is unknown.")
  t.eq(json.read(file).label, "not proven unseen: the model's pretraining corpus is unknown")
  t.eq(json.read(file).audit.models[1].status, "unknown")

  local clean = exp1_runs(model_with({seed = 1, examples = 150, isa = {"avx512", "avx2"}, defect_rate = 0.15,
                                      corpus_version = kernelgen.corpus_version}))
  _, _, raw = heldout.compare(clean, {G = 0, device = "cpu", heldout_tasks = "none"}, audited_deps())
  t.eq(raw.label, "held out: unseen in pretraining (audited)")
end)

t.run()
