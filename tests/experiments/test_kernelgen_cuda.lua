-- The CUDA tasks' synthetic kernels (scripts/pretraining/kernelgen/cuda.lua): every variant
-- of every covered task is device code defining the spec's entry with its exact signature,
-- in an answer extract.cuda_kernel reads whole; the variants are distinct and several per
-- task; examples ask with prompts.cuda_write at their drawn size; a corpus reproduces from
-- its seed and never names a held-out task; pretrain.lua's --cuda_share adds such examples
-- (and checks it against --task_share). Whether the kernels verify on a GPU is
-- tests/bench/test_cuda_tasks.lua's (its GPU branch).
local t = require "engine.test"
local kc = require "kernelgen.cuda"
local kernelgen = require "kernelgen"
local cuda_tasks = require "engine.cuda_tasks"
local extract = require "method.extract"
local prompts = require "method.prompts"
local args = require "engine.args"
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")

local function count(list, pred)
  local n = 0
  for _, x in ipairs(list) do if pred(x) then n = n + 1 end end
  return n
end

-- What would betray a held-out CUDA task: its name or entry as a word, its statement.
local heldout = {}
for _, spec in ipairs(cuda_tasks.list()) do
  if spec.split == "heldout" then heldout[#heldout + 1] = spec end
end
local function leaks(text)
  for _, spec in ipairs(heldout) do
    for _, word in ipairs({spec.name, spec.entry}) do
      if text:find("%f[%w_]" .. word .. "%f[^%w_]") then return spec.name end
    end
    if text:find(spec.statement, 1, true) then return spec.name .. " (its statement)" end
  end
end

local function text_of(ex)
  local parts = {ex.completion}
  for _, m in ipairs(ex.messages) do parts[#parts + 1] = m.content end
  return table.concat(parts, "\n")
end

t.test("the covered tasks are the train split of the CUDA tasks", function()
  local train = {}
  for _, spec in ipairs(cuda_tasks.list()) do
    if spec.split == "train" then train[#train + 1] = spec.name end
  end
  local covered = {table.unpack(kc.tasks)}
  table.sort(covered)
  t.eq(covered, train)
  t.ok(#heldout >= 3, "held-out CUDA tasks exist")
  for _, spec in ipairs(heldout) do
    t.raises(function() kc.kernel(kernelgen.rng(1), spec.name) end, "not covered")
    t.raises(function() kc.variants(spec.name) end, "not covered")
  end
end)

t.test("every variant defines the spec's entry with its exact signature, extracted whole", function()
  local rng = kernelgen.rng(3)
  for _, name in ipairs(kc.tasks) do
    local spec = cuda_tasks.get(name)
    local variants = kc.variants(name)
    t.ok(#variants >= 3, name .. ": " .. #variants .. " variants")
    t.eq(#variants, #kc.choices(name), name)
    local codes, labels = {}, {}
    for _, v in ipairs(variants) do
      local what = name .. " [" .. v.variant .. "]"
      t.eq(v.task, name)
      t.contains(v.code, spec.signature .. " {", what)
      t.ok(not codes[v.code], what .. ": the same code as another variant")
      t.ok(not labels[v.variant], what .. ": the same label as another variant")
      codes[v.code], labels[v.variant] = true, true
      for _ = 1, 3 do
        local got, why = extract.cuda_kernel(kc.completion(rng, v.code), spec.entry)
        t.eq(got, v.code, what .. ": " .. tostring(why))
      end
      -- NVRTC compiles no headers, and the harness launches the kernel
      t.ok(not v.code:find("#include", 1, true) and not v.code:find("main(", 1, true), what)
      -- a barrier is never in a branch some threads of a block skip
      for line in v.code:gmatch("[^\n]+") do
        t.ok(not (line:find("__syncthreads", 1, true) and line:find("if%s*%(")), what .. ": " .. line)
      end
      local _, open = v.code:gsub("{", "")
      local _, close = v.code:gsub("}", "")
      t.eq(open, close, what .. ": braces")
    end
  end
end)

t.test("drawn kernels vary names and layout beyond their variants, and stay extractable", function()
  local rng = kernelgen.rng(17)
  for _, name in ipairs(kc.tasks) do
    local spec = cuda_tasks.get(name)
    local seen, variants, texts = {}, {}, 0
    for _ = 1, 200 do
      local k = kc.kernel(rng, name)
      t.contains(k.code, spec.signature .. " {", name)
      t.eq(extract.cuda_kernel("```cuda\n" .. k.code .. "```", spec.entry), k.code, name .. " [" .. k.variant .. "]")
      if not seen[k.code] then seen[k.code], texts = true, texts + 1 end
      variants[k.variant] = true
    end
    local n = #kc.choices(name)
    t.ok(texts > 2 * n, string.format("%s: %d different texts in 200 draws of %d variants", name, texts, n))
    -- every variant is drawn
    for _, v in ipairs(kc.variants(name)) do t.ok(variants[v.variant], name .. " [" .. v.variant .. "] never drawn") end
  end
  t.raises(function() kc.kernel(kernelgen.rng(1), "dot") end, "not covered")
end)

t.test("an example asks with prompts.cuda_write at its size and answers with a kernel", function()
  local rng = kernelgen.rng(5)
  local sizes, gpus = {}, {}
  for i = 1, 80 do
    local name = kc.tasks[(i - 1) % #kc.tasks + 1]
    local ex = kc.example(rng, {task = name})
    local spec = cuda_tasks.get(name)
    t.eq(ex.task, name)
    t.ok(ex.size == "train" or ex.size == "test", ex.size)
    t.eq(ex.messages, prompts.cuda_write(spec, cuda_tasks.resolve(spec, ex.size), ex.gpu), name)
    t.eq(extract.cuda_kernel(ex.completion, spec.entry), ex.code, name)
    t.ok(#ex.variant > 0, "a variant")
    sizes[ex.size], gpus[ex.gpu] = true, true
  end
  t.ok(sizes.train and sizes.test, "both sizes drawn")
  for gpu in pairs(gpus) do t.ok(count(kc.gpus, function(g) return g == gpu end) == 1, gpu) end
  -- a GPU and a size on request
  local ex = kc.example(rng, {task = "matmul", gpu = "NVIDIA L4", size = "test"})
  t.contains(ex.messages[2].content, "It runs on an NVIDIA L4.")
  t.contains(ex.messages[2].content, "Sizes: k = 29, m = 33, n = 47.")
end)

t.test("a corpus goes round the tasks, reproduces from its seed and names no held-out task", function()
  local a = kc.corpus(350, {seed = 9})
  t.eq(#a, 350)
  local b = kc.corpus(350, {seed = 9})
  for i = 1, #a do
    t.eq(a[i].task, kc.tasks[(i - 1) % #kc.tasks + 1])
    t.eq(a[i].completion, b[i].completion, "example " .. i)
    t.eq(a[i].messages, b[i].messages, "example " .. i)
  end
  local other = kc.corpus(350, {seed = 10})
  local differ = 0
  for i = 1, #a do if a[i].completion ~= other[i].completion then differ = differ + 1 end end
  t.ok(differ > 300, "another seed, another corpus: " .. differ .. " of 350 differ")
  for _, list in ipairs({a, other}) do
    for i, ex in ipairs(list) do
      local leak = leaks(text_of(ex))
      t.ok(not leak, string.format("example %d names %s", i, leak or ""))
    end
  end
  t.eq(#kc.corpus(0), 0)
  local one = kc.corpus(4, {seed = 2, gpus = {"NVIDIA H200"}, tasks = {"transpose"}})
  for _, ex in ipairs(one) do t.eq({ex.task, ex.gpu}, {"transpose", "NVIDIA H200"}) end
  t.raises(function() kc.corpus(-1) end, "non-negative integer")
  t.raises(function() kc.corpus(3, {tasks = {"gelu_tanh"}}) end, "not covered")
end)

local function parse(list)
  local argv = {[0] = "pretrain.lua"}
  for _, a in ipairs(list) do argv[#argv + 1] = a end
  return args.try_parse(argv, pretrain.spec)
end

t.test("pretrain's --cuda_share: checked against --task_share", function()
  local opts = parse{}
  t.eq(opts.cuda_share, 0)
  local none, why = parse{"--task_share=0.6", "--cuda_share=0.5"}
  t.eq(none, nil)
  t.contains(why, "--task_share=0.6")
  t.contains(why, "--cuda_share=0.5")
  t.contains(why, "more than 1")
  t.ok(parse{"--task_share=0.7", "--cuda_share=0.3"}, "shares adding up to 1")
  t.eq(parse{"--cuda_share=1.5"}, nil)
  t.eq(parse{"--cuda_share=-0.1"}, nil)
end)

t.test("pretrain's --cuda_share puts CUDA examples in the corpus, spread evenly, the tokenizer's among them", function()
  local opts = assert(parse{"--examples=60", "--cuda_share=0.2", "--task_share=0.1"})
  local corpus = pretrain.build_corpus(opts)
  t.eq(#corpus, 60)
  local cuda = function(ex) return ex.kind == "cuda_write" end
  t.eq(count(corpus, cuda), 12)
  t.eq(count({table.unpack(corpus, 1, 30)}, cuda), 6, "spread through the corpus")
  -- the tokenizer is trained on the first --tokenizer_examples: CUDA ones among them
  t.ok(cuda(corpus[1]), "the first example is a CUDA one")
  t.ok(count({table.unpack(corpus, 1, 16)}, cuda) >= 3, "CUDA examples among the tokenizer's first 16")
  for _, ex in ipairs(corpus) do
    if cuda(ex) then
      t.contains(ex.prompt, prompts.cuda_system)
      t.contains(ex.completion, "```cuda\n")
    end
  end
  -- the matmul and suite examples are those of a corpus without CUDA, in the same order
  local plain = pretrain.build_corpus(assert(parse{"--examples=48", "--task_share=0.125"}))
  local rest = {}
  for _, ex in ipairs(corpus) do if not cuda(ex) then rest[#rest + 1] = ex end end
  t.eq(rest, plain)
  -- shares rounding up together never take more than the corpus
  t.eq(#pretrain.build_corpus(assert(parse{"--examples=1", "--task_share=0.5", "--cuda_share=0.5"})), 1)
  -- no CUDA share: the corpus is the one it always was
  local a = pretrain.build_corpus(assert(parse{"--examples=30", "--task_share=0.2"}))
  local b = pretrain.build_corpus(assert(parse{"--examples=30", "--task_share=0.2", "--cuda_share=0"}))
  t.eq(a, b)
  t.eq(count(a, cuda), 0)
end)

t.test("the exported README says what share of the corpus is CUDA, and which tasks", function()
  local opts = assert(parse{"--cuda_share=0.25", "--task_share=0.25"})
  opts.device = "cpu"
  local figures = {corpus = {examples = 10, tokens = 100}, parameters = 1, final_loss = 1, loss_window = 1,
                   seconds = 1, command_options = "--cuda_share=0.25"}
  local text = pretrain.model_readme(opts, figures)
  t.contains(text, "50% double-precision matmul")
  t.contains(text, "25% the task suite's other training tasks")
  t.contains(text, "25% single-precision CUDA device code")
  t.contains(text, "softmax_rows")
  t.contains(text, "none of the held-out tasks")
  t.ok(not leaks(text), "no held-out task named")
  opts.cuda_share, opts.task_share = 0, 0
  t.contains(pretrain.model_readme(opts, figures), "matmul kernels (`scripts/pretraining/kernelgen.lua`)")
end)

t.run()
