-- Pretrains the default small model from scratch: a synthetic corpus of matmul kernels
-- (kernelgen.lua; with --task_share the suite's other tasks, with --cuda_share CUDA
-- kernels of kernelgen/cuda.lua) paired with the experiments' prompts, a byte-level BPE
-- tokenizer trained on it, and a Qwen2-architecture model trained on it with the SFT
-- primitive.
--
--   engine pretrain.lua --device=cuda                 # what made models/small (see its README)
--   engine pretrain.lua --steps=200 --hidden=64 --out=runs/pt-small --export=models/mine
--   engine pretrain.lua --resume                      # continue a killed run
--
-- The run directory (--out) holds the random initial checkpoint with its tokenizer
-- (init/), trainer checkpoints, metrics.jsonl, the settings and the corpus (corpus.jsonl,
-- drawn from --seed when the run starts and read back when it resumes), so every step sees
-- the same batch after a resume. The trained model is exported to --export in Hugging Face
-- format (bf16 by default), with a README.md that says how it was made and pretrain.json
-- with the settings and figures.

local args = require "engine.args"
local batches = require "method.batches"
local cli = require "core.cli"
local kernelgen = require "kernelgen"
local options = require "run.options"
local prompts = require "method.prompts"
local rng_of = require("engine.rng").new
local outputs = require "core.outputs"
local runs = require "run.runs"
local split = require "method.heldout_split"
local tasks = require "engine.tasks"
local tiny_model = require "tiny_model"
local wiring = require "method.wiring"
local wordings = require "wordings"

local M = {}

M.spec = {
  description = "Pretrains a small kernel-writing model from scratch on kernelgen's synthetic "
    .. "corpus (tokenizer, random init, SFT) and exports it in Hugging Face format.",
  options = {
    {"out", "runs/pretrain", "run directory (initial model, checkpoints, metrics)"},
    {"export", nil, "where the trained model goes [default: the engine's models/small]",
     type = "string"},
    {"overwrite", false, "replace an existing model at --export"},
    {"resume", false, "continue the run in --out where it stopped"},
    {"seed", 1, "seed of the corpus, the initial weights and the batch order"},
    -- corpus
    {"examples", 40000, "synthetic examples (prompt + kernel) in the corpus", min = 1},
    {"defect_rate", 0.15, "share of kernels with a deliberate defect", min = 0, max = 1},
    {"task_share", 0.0, "share of the corpus from the suite's other training tasks "
     .. "(kernelgen.tasks: its covered tasks in turn); the rest is matmul", min = 0, max = 1},
    {"universe_share", 0.0, "share of the corpus from the generated universe of tasks "
     .. "(scripts/pretraining/universe.lua: a computation of its own per example, asked in its "
     .. "fixed or first-stage prompt); with the other shares at most 1", min = 0, max = 1},
    {"cuda_share", 0.0, "share of the corpus from the CUDA tasks' training split (kernelgen.cuda: "
     .. "their covered tasks in turn, prompts naming an H100, H200 or A100); with --task_share at "
     .. "most 1", min = 0, max = 1},
    {"kernel_names", "drawn", "names in the matmul and suite-task kernels: drawn (each role's name drawn "
     .. "per kernel from a few) or fixed (one name a role: a small model with sub-line pieces "
     .. "copies a drawn name badly from its definition to its uses); the universe's stay drawn",
     choices = {"drawn", "fixed"}},
    {"wording_share", 0.0, "share of the prompts asked in drawn words (scripts/pretraining/wordings.lua: "
     .. "a drawn framing sentence and, in a fixed prompt, an emphasis composed from pieces; never "
     .. "a held-out wording); 0: every prompt in the generators' words", min = 0, max = 1},
    {"wording_version", wordings.version, "the framings the drawn words take their first line from "
     .. "(wordings.lua: 1, those that speak of a signature only; 2, those and more that do not; 3, "
     .. "those and more that name the name, parameters and types before the prototype; 4, those, "
     .. "and half the draws composed of pieces, some holding a made-up identifier)",
     min = 1, max = wordings.version},
    {"rename_share", 0.0, "share of the matmul and suite-task examples asking for their function under a "
     .. "drawn name (universe.entry_name), in the prompt's prototype and the answer alike, so that a name "
     .. "is copied from the prompt, not recalled from the statement; 0: every task under its own name",
     min = 0, max = 1},
    {"isa", {"avx512", "avx2"}, "vector ISAs the corpus's prompts name, in equal shares; each "
     .. "answer uses its prompt's ISA (or no SIMD), so the model writes for the machine it "
     .. "runs on", choices = {"avx512", "avx2"}},
    {"max_len", 1024, "longest example in tokens (longer ones are left out)", min = 1},
    {"vocab_size", 4096, "tokenizer vocabulary (bytes, merges and the ChatML tokens)", min = 1},
    {"tokenizer_examples", 3000, "examples the tokenizer is trained on", min = 1},
    {"pattern", "[^\\n]+\\n?|\\n", "the tokenizer's split regex: merges never cross its pieces "
     .. "(whole lines: a kernel is ~100 tokens instead of ~600 with Qwen2's)"},
    -- model
    {"hidden", 256, "hidden size", min = 1},
    {"layers", 4, "transformer blocks", min = 1},
    {"heads", 4, "attention heads", min = 1},
    {"kv_heads", 2, "key/value heads", min = 1},
    {"intermediate", 768, "MLP width", min = 1},
    -- training
    {"device", "auto", "where training runs: auto (CUDA when present, else cpu), cpu, cuda, "
     .. "cuda:N", check = options.check_device},
    {"steps", 2000, "optimizer steps", min = 1},
    {"batch", 64, "examples per step", min = 1},
    {"micro_batch", 16, "examples per forward/backward pass", min = 1},
    {"micro_tokens", 0, "instead of --micro_batch, examples sorted by length and cut where a "
     .. "pass would hold more tokens than this with its padding (0: off); the same step, "
     .. "far less padding", min = 0},
    {"least_padding", false, "with --micro_tokens, cut each step where the fewest padded tokens are computed "
     .. "(a micro-batch costed as 8,192 tokens) instead of filling each micro-batch in order"},
    {"tf32", false, "float32 matrix products in TensorFloat-32 on CUDA (faster, 10-bit "
     .. "mantissas in the products)"},
    {"lr", 2e-3, "peak learning rate", above = 0},
    {"warmup", 100, "steps of linear warm-up", min = 0},
    {"min_lr", 0.1, "final learning rate as a fraction of the peak (cosine decay)", min = 0,
     max = 1},
    {"weight_decay", 0.01, "AdamW weight decay", min = 0},
    {"dtype", "bf16", "dtype of the exported weights", choices = {"bf16", "fp16", "fp32"}},
    {"save_every", 250, "checkpoint every N steps", min = 1},
    {"stop_after", 0, "stop after this step with a checkpoint (0: train to --steps and "
     .. "export); --resume continues", min = 0},
    {"time_limit", 0.0, "stop with a checkpoint after the first step past this many seconds of "
     .. "training in this call (0: none); --resume continues", min = 0},
    {"log_every", 25, "log the loss every N steps", min = 1},
    {"corpus_only", false, "build the run's corpus in --out and stop: the run, carried to another "
     .. "machine, trains there with --resume and the same options, without building it again"},
    cli.debug_option,
  },
  -- the model's shape: attention heads split the hidden size, key/value heads the heads
  check = function(o)
    -- the rest of the corpus is matmul: the two shares cannot take more than all of it
    if (o.task_share or 0) + (o.cuda_share or 0) + (o.universe_share or 0) > 1 + 1e-9 then
      return string.format("--task_share=%g, --cuda_share=%g and --universe_share=%g add up to more "
                           .. "than 1 (the rest of the corpus is matmul)", o.task_share, o.cuda_share,
                           o.universe_share or 0)
    end
    if o.hidden % o.heads ~= 0 then
      return string.format("--hidden=%d must be a multiple of --heads=%d", o.hidden, o.heads)
    end
    if o.heads % o.kv_heads ~= 0 then
      return string.format("--heads=%d must be a multiple of --kv_heads=%d", o.heads, o.kv_heads)
    end
  end,
}

-- The settings that define the model: a run resumes only with the same ones.
local identity_keys = {"corpus_version", "seed", "examples", "defect_rate", "task_share", "cuda_share",
                       "universe_share", "universe_version", "kernel_names", "wording_share", "wording_version",
                       "rename_share", "isa",
                       "max_len", "vocab_size", "tokenizer_examples", "pattern", "hidden", "layers", "heads",
                       "kv_heads", "intermediate", "steps", "batch", "lr", "warmup", "min_lr",
                       "weight_decay"}

-- Options added later, left out of the identity at the value that reproduces the runs made
-- before them, so that those runs still resume. corpus_version is kernelgen's
-- (kernelgen.corpus_version: 1 drew matmul's held-out sizes); a run of another version
-- does not resume, and audit.lua rebuilds a model's corpus at the version its
-- pretrain.json names (none: 1).
local introduced = {cuda_share = 0, universe_share = 0, corpus_version = 1, kernel_names = "drawn",
                    wording_share = 0, wording_version = 1, rename_share = 0}

local function identity(opts)
  local id = {}
  -- the universe's version only where the corpus holds universe tasks
  local universe_version = (opts.universe_share or 0) > 0 and (opts.universe_version or require("universe").version) or nil
  -- and the framings' version only where prompts are put in drawn words
  local wording_version = (opts.wording_share or 0) > 0 and (opts.wording_version or wordings.version) or nil
  local with = setmetatable({corpus_version = opts.corpus_version or kernelgen.corpus_version,
                             universe_version = universe_version, wording_version = wording_version},
                            {__index = opts})
  for _, k in ipairs(identity_keys) do
    if introduced[k] == nil or with[k] ~= introduced[k] then id[k] = with[k] end
  end
  return id
end
M.identity = identity

-- Linear warm-up, then cosine decay to min_lr * lr.
function M.lr_at(step, opts)
  if step <= opts.warmup then return opts.lr * step / math.max(opts.warmup, 1) end
  local progress = (step - opts.warmup) / math.max(opts.steps - opts.warmup, 1)
  local floor = opts.min_lr * opts.lr
  return floor + (opts.lr - floor) * 0.5 * (1 + math.cos(math.pi * math.min(progress, 1)))
end

-- The corpus as (prompt text, completion text) pairs, in generation order.
-- The ISA mix of the corpus: equal shares of the --isa list.
function M.isa_mix(opts)
  local list = type(opts.isa) == "table" and opts.isa or {opts.isa}
  if #list == 1 then return list[1] end
  local mix = {}
  for _, isa in ipairs(list) do mix[isa] = 1 end
  return mix
end

-- Two lists merged in proportion, each keeping its order: after i items, b has given
-- ceil(i #b / total) of them, so b's items are spread evenly through a's.
local function interleave(a, b)
  local out, ia, ib, total = {}, 1, 1, #a + #b
  for i = 1, total do
    if ib <= #b and (ib - 1) * total < i * #b then
      out[i], ib = b[ib], ib + 1
    else
      out[i], ia = a[ia], ia + 1
    end
  end
  return out
end
M.interleave = interleave

-- The chat `messages` with its user's text in drawn words (wordings.vary). The drawn words
-- are checked as the generators check theirs: none may hold an item of the held-out split.
local function in_drawn_words(messages, pair, rng, check, version)
  local out = {table.unpack(messages)}
  local user = out[#out]
  out[#out] = {role = user.role, content = wordings.vary(user.content, rng, version)}
  if check ~= false then
    split.check({task = pair.task, size = pair.size, isa = pair.isa, messages = out, completion = pair.completion},
                "pretrain.wordings")
  end
  return out
end

-- The messages and completion of a matmul or suite-task example asking for its function
-- under a drawn name instead of `entry`, or nil where the name is also a word of the prompt's
-- prose (dot in "dot product"): only code is renamed, the prototype's line and the answer.
local function under_drawn_name(messages, completion, entry, rng)
  local word = "%f[%w_]" .. entry:gsub("%p", "%%%0") .. "%f[^%w_]"
  local user = messages[#messages].content
  local prose = user:gsub("```.-```", ""):gsub("[^\n]*" .. word .. "%s*%([^\n]*", "")
  if prose:find(word) then return nil end
  -- a name no message and not the answer holds already (the system prompt's "fast" included)
  local function taken(name)
    local as_word = "%f[%w_]" .. name .. "%f[^%w_]"
    for _, m in ipairs(messages) do if m.content:find(as_word) then return true end end
    return completion:find(as_word) ~= nil
  end
  local name
  repeat name = require("universe").entry_name(rng) until not taken(name)
  local out = {table.unpack(messages)}
  out[#out] = {role = messages[#messages].role, content = (user:gsub(word, name))}
  return out, (completion:gsub(word, name))
end

-- The corpus of the settings `opts` (pretrain.json's): each pair with its task ("matmul",
-- a task of the suite's name, "cuda:NAME") and size. opts.corpus_version (default the
-- current) and opts.check (false: keep the held-out items a generator would refuse) are
-- audit.lua's, to rebuild a model's corpus as it was. opts.wording_share of the prompts, drawn
-- from opts.seed after the parts are merged, are put in drawn words (wordings.lua, at
-- opts.wording_version, default the current), after
-- opts.rename_share of the matmul and suite-task examples are asked under a drawn name.
function M.build_corpus(opts)
  local n_tasks = math.floor(opts.examples * (opts.task_share or 0) + 0.5)
  -- rounding both shares up must not take more than the corpus
  local n_cuda = math.min(math.floor(opts.examples * (opts.cuda_share or 0) + 0.5), opts.examples - n_tasks)
  local n_universe = math.min(math.floor(opts.examples * (opts.universe_share or 0) + 0.5),
                              opts.examples - n_tasks - n_cuda)
  local examples = kernelgen.corpus(opts.examples - n_tasks - n_cuda - n_universe, {seed = opts.seed, isa = M.isa_mix(opts),
                                                                       defect_rate = opts.defect_rate,
                                                                       version = opts.corpus_version, check = opts.check,
                                                                       names = opts.kernel_names})
  if n_tasks > 0 then
    examples = interleave(examples, require("kernelgen.tasks").corpus(n_tasks, {seed = opts.seed, isa = M.isa_mix(opts),
                                                                              check = opts.check,
                                                                              names = opts.kernel_names}))
  end
  -- spread evenly, so the tokenizer's first examples hold CUDA ones in proportion (the very
  -- first among them)
  if n_cuda > 0 then
    examples = interleave(examples, require("kernelgen.cuda").corpus(n_cuda, {seed = opts.seed, check = opts.check}))
  end
  if n_universe > 0 then
    examples = interleave(examples, require("universe").corpus(n_universe, {seed = opts.seed, isa = M.isa_mix(opts)}))
  end
  local share = opts.wording_share or 0
  local rng = share > 0 and rng_of(string.format("wordings %d", opts.seed)) or nil
  local renames = opts.rename_share or 0
  local names_rng = renames > 0 and rng_of(string.format("names %d", opts.seed)) or nil
  local pairs_ = {}
  for i, ex in ipairs(examples) do
    local task = type(ex.task) == "table" and "matmul" or ex.kind == "cuda_write" and "cuda:" .. ex.task or ex.task
    local pair = {completion = ex.completion, kind = ex.kind, isa = ex.isa, task = task,
                  size = type(ex.task) == "table" and ex.task or ex.size}
    local messages = ex.messages
    local spec = names_rng and not task:find("^cuda:") and tasks.get(task)
    if spec and not spec.family:find("^universe_") and names_rng:chance(renames) then
      local renamed, completion = under_drawn_name(messages, pair.completion, spec.entry, names_rng)
      if renamed then
        messages, pair.completion = renamed, completion
        if opts.check ~= false then
          split.check({task = task, size = pair.size, isa = pair.isa, messages = messages, completion = completion},
                      "pretrain.rename")
        end
      end
    end
    if rng and rng:chance(share) then messages = in_drawn_words(messages, pair, rng, opts.check, opts.wording_version) end
    pair.prompt = prompts.render(messages)
    pairs_[i] = pair
  end
  return pairs_
end
local build_corpus = M.build_corpus

-- The corpus a run trains on, kept in its directory (corpus.jsonl: each pair's prompt and
-- completion): built when the run starts, read back when it resumes, so a resumed call
-- spends no minute rebuilding 60,000 examples and trains on the corpus it started with.
-- Returns the pairs and how they were had ("built" or "read").
function M.run_corpus(opts)
  local file = opts.out .. "/corpus.jsonl"
  if sys.exists(file) then return outputs.read_jsonl(file), "read" end
  local corpus = build_corpus(opts)
  local pairs_ = {}
  for i, ex in ipairs(corpus) do pairs_[i] = {prompt = ex.prompt, completion = ex.completion} end
  outputs.write_jsonl(file, pairs_)  -- whole or absent: a call killed while writing builds it again
  return corpus, "built"
end
local run_corpus = M.run_corpus

-- The initial checkpoint: the tokenizer trained on the corpus's first examples, weights
-- drawn from the seed.
local function write_init(dir, corpus, opts)
  local texts = {}
  for i = 1, math.min(opts.tokenizer_examples, #corpus) do
    texts[i] = corpus[i].prompt .. corpus[i].completion
  end
  tiny_model.write(dir, {vocab_size = opts.vocab_size, hidden = opts.hidden,
                         layers = opts.layers, heads = opts.heads, kv_heads = opts.kv_heads,
                         intermediate = opts.intermediate, seed = opts.seed,
                         max_position = 2 * opts.max_len, texts = texts,
                         pattern = opts.pattern})
end

-- Drops examples longer than max_len tokens; returns the kept ones and counts.
local function fit(corpus, tok, max_len)
  local kept, tokens, dropped = {}, 0, 0
  for _, ex in ipairs(corpus) do
    local n = #tok:encode(ex.prompt) + #tok:encode(ex.completion) + 1
    if n <= max_len then
      kept[#kept + 1] = ex
      tokens = tokens + n
    else
      dropped = dropped + 1
    end
  end
  return kept, {examples = #kept, dropped = dropped, tokens = tokens}
end

-- Batch `step`'s examples (batches.lua: a fresh permutation of the corpus per epoch, drawn
-- from the seed), each as the prompt and completion the trainer takes.
local function batch_of(corpus, step, opts, cache)
  local out = {}
  for i, ex in ipairs(batches.at(corpus, step, opts.batch, opts.seed * 7919, cache)) do
    out[i] = {prompt = ex.prompt, completion = ex.completion}
  end
  return out
end

-- The README's words for a corpus with CUDA examples: matmul, the suite's tasks if any,
-- and the CUDA tasks' training split.
local function cuda_corpus_words(opts)
  local share, cuda = opts.task_share or 0, opts.cuda_share
  local kc = require "kernelgen.cuda"
  local words = {string.format("synthetic corpus of kernels: %.0f%% double-precision matmul in C", 100 * (1 - share - cuda)),
                 "(`scripts/pretraining/kernelgen.lua`),"}
  if share > 0 then
    words[#words + 1] = string.format("%.0f%% the task suite's other training tasks in C (`kernelgen/tasks/init.lua`:", 100 * share)
    words[#words + 1] = "BLAS 1-3, stencils, SpMV, scans, transposition),"
  end
  for _, l in ipairs{
    string.format("and %.0f%% single-precision CUDA device code for the CUDA tasks' training split", 100 * cuda),
    "(`kernelgen/cuda.lua`, in variants of reduction, load width and tiling:",
    table.concat(kc.tasks, ", ") .. ";",
    "none of the held-out tasks), its prompts naming an " .. table.concat(kc.gpus, ", ", 1, #kc.gpus - 1),
    "or " .. kc.gpus[#kc.gpus] .. ",",
    "each paired with the prompt it answers in the experiments' ChatML format: Experiment 1's",
    "fixed prompts, SQD's write/improve/advance/repair prompts for every stage of its task's",
    "ladder, and the CUDA tasks' prompt with its sizes and signature. It writes varied, mostly",
    "compilable kernels that compose loop orders, cache",
  } do words[#words + 1] = l end
  return words, "these tasks"
end

-- What a corpus without the universe was, in the README's words: matmul alone, or with the
-- suite's tasks (and the CUDA tasks').
local function suite_corpus_words(opts)
  local share = opts.task_share or 0
  if (opts.cuda_share or 0) > 0 then return cuda_corpus_words(opts) end
  if share == 0 then
    return {
      "synthetic corpus of double-precision matmul kernels (`scripts/pretraining/kernelgen.lua`),",
      "each paired with the prompt it answers in the experiments' ChatML format: Experiment",
      "1's fixed prompts, SQD's write/improve/advance/repair prompts for every stage of",
      "Table I. It writes varied, mostly compilable kernels that compose loop orders, cache",
    }, "this task"
  end
  return {
    string.format("synthetic corpus of double-precision kernels, %.0f%% matmul (`scripts/pretraining/kernelgen.lua`)",
                  100 * (1 - share)),
    string.format("and %.0f%% the task suite's other training tasks (`kernelgen/tasks/init.lua`: BLAS 1-3, stencils,",
                  100 * share),
    "SpMV, scans, transposition; none of the held-out tasks), each paired with the prompt it",
    "answers in the experiments' ChatML format: Experiment 1's fixed prompts, SQD's",
    "write/improve/advance/repair prompts for every stage of its task's ladder. It writes",
    "varied, mostly compilable kernels that compose loop orders, cache",
  }, "these tasks"
end

-- What the corpus was, in the README's words; with a share of the generated universe, its
-- parts in turn.
local function corpus_words(opts)
  local universe = opts.universe_share or 0
  if universe == 0 then return suite_corpus_words(opts) end
  local share, cuda = opts.task_share or 0, opts.cuda_share or 0
  local words = {string.format("synthetic corpus of kernels: %.0f%% double-precision matmul in C", 100 * (1 - share - cuda - universe)),
                 "(`scripts/pretraining/kernelgen.lua`),"}
  if share > 0 then
    words[#words + 1] = string.format("%.0f%% the task suite's other training tasks (`kernelgen/tasks/init.lua`),", 100 * share)
  end
  if cuda > 0 then
    words[#words + 1] = string.format("%.0f%% CUDA device code for the CUDA tasks' training split (`kernelgen/cuda.lua`),", 100 * cuda)
  end
  for _, l in ipairs{
    string.format("and %.0f%% tasks of a generated universe (`scripts/pretraining/universe.lua`: elementwise", 100 * universe),
    "chains, reductions, scans, stencils, triangular and banded products, recurrences, gathers,",
    "transposes; a computation of its own per example, none with a held-out task's shape),",
    "each paired with the prompt it answers in the experiments' ChatML format. It writes varied,",
    "mostly compilable kernels that compose loop orders, cache",
  } do words[#words + 1] = l end
  return words, "these tasks"
end

function M.model_readme(opts, figures)
  local name = (opts.export or "small"):gsub("/+$", ""):match("([^/]+)$")
  local lines = {
    "# " .. name .. (name == "small" and ": the engine's default kernel-writing model" or ": a kernel-writing model"),
    "",
    "A Qwen2-architecture causal language model trained from random initialisation on a",
  }
  local corpus, knows = corpus_words(opts)
  for _, l in ipairs(corpus) do lines[#lines + 1] = l end
  for _, l in ipairs{
    "and register blocking, SIMD intrinsics, OpenMP and prefetching, with a share of",
    "realistic defects, so `engine experiment1.lua` and `engine experiment2.lua` show",
    "the whole method (sampling, evaluation, rewards, GRPO, SQD) working out of the box on",
    "a laptop. It is a stand-in for a pretrained code model, not a general one: it knows",
    "nothing but " .. knows .. ".",
    "",
    "The prompts name the machine's vector ISA (" .. table.concat(
      type(opts.isa) == "table" and opts.isa or {opts.isa}, ", ") .. " in equal shares of the",
    "corpus) and each answer uses only that ISA's intrinsics, or none: AVX-512 prompts get",
    "`_mm512_*_pd` kernels, AVX2/FMA prompts `_mm256_*_pd` ones, so on a machine without",
    "AVX-512 (`--isa=auto` there, or `ENGINE_TARGET=x86-64-v3`) it writes kernels that compile.",
    "",
  } do lines[#lines + 1] = l end
  -- how the prompts were varied, where they were
  local varied = {}
  if (opts.wording_share or 0) > 0 then
    varied[#varied + 1] = string.format("%g%% of the prompts are in drawn words (`scripts/pretraining/wordings.lua`)",
                                        100 * opts.wording_share)
  end
  if (opts.rename_share or 0) > 0 then
    varied[#varied + 1] = string.format("%g%% of the matmul and suite-task examples ask for their function under a "
                                        .. "drawn name", 100 * opts.rename_share)
  end
  if #varied > 0 then
    lines[#lines + 1] = table.concat(varied, "; ") .. "."
    lines[#lines + 1] = ""
  end
  for _, l in ipairs{
    "## How it was made",
    "",
    "```",
    "engine pretrain.lua --device=" .. opts.device .. " " .. figures.command_options,
    "```",
    "",
    string.format("- corpus: %d examples (seed %d, defect rate %.2f, ISAs %s), %d kept at <= %d "
                  .. "tokens, %d tokens", opts.examples, opts.seed, opts.defect_rate,
                  table.concat(type(opts.isa) == "table" and opts.isa or {opts.isa}, "+"),
                  figures.corpus.examples, opts.max_len, figures.corpus.tokens),
    string.format("- tokenizer: byte-level BPE, %d tokens, trained on the first %d examples; %s",
                  opts.vocab_size, opts.tokenizer_examples, opts.pattern == ""
                    and "its pieces are Qwen2's (words, numbers, punctuation runs: merges stay "
                        .. "below the line), so an unseen line is a few tokens"
                    or string.format("its pieces are whole lines (split regex `%s`), so a "
                                     .. "frequent line of code is one token", opts.pattern)),
    string.format("- model: hidden %d, %d layers, %d heads (%d key/value), MLP %d, tied "
                  .. "embeddings, %d parameters, stored as %s", opts.hidden, opts.layers,
                  opts.heads, opts.kv_heads, opts.intermediate, figures.parameters, opts.dtype),
    string.format("- training: %d SFT steps of %d examples (loss on the completion only), "
                  .. "AdamW lr %g with %d warm-up steps and cosine decay to %g x, weight "
                  .. "decay %g", opts.steps, opts.batch, opts.lr, opts.warmup, opts.min_lr,
                  opts.weight_decay),
    string.format("- final training loss %.4f (mean of the last %d steps); %.0f s on %s",
                  figures.final_loss, figures.loss_window, figures.seconds, opts.device),
    "",
    "`pretrain.json` holds the same settings and figures. What it achieves (compile and",
    "verification rates, technique combinations, learning in Experiment 1) is in the",
    "repository's docs/results.md.",
    "",
  } do lines[#lines + 1] = l end
  return table.concat(lines, "\n")
end

-- The options as a command line (those that differ from the defaults).
-- The last `n` training losses the run recorded (metrics.jsonl), oldest first: a run
-- resumed after its last step exports with the loss it ended on, not with none.
local function recorded_losses(dir, n)
  local losses = {}
  local f = io.open(dir .. "/metrics.jsonl")
  if not f then return losses end
  for line in f:lines() do
    local ok, rec = pcall(json.decode, line)
    if ok and type(rec) == "table" and type(rec.loss) == "number" then
      losses[#losses + 1] = rec.loss
      if #losses > n then table.remove(losses, 1) end
    end
  end
  f:close()
  return losses
end

local function command_options(opts)
  local parts = {}
  for _, decl in ipairs(M.spec.options) do
    local k = decl[1]
    if opts._given[k] and k ~= "device" and k ~= "out" and k ~= "export" and k ~= "resume"
       and k ~= "overwrite" and k ~= "debug" then
      local v = opts[k]
      parts[#parts + 1] = string.format("--%s=%s", k, type(v) == "table" and table.concat(v, ",")
                                                      or tostring(v))
    end
  end
  return table.concat(parts, " ")
end

function M.run(opts)
  local export = opts.export or (engine.models .. "/small")
  if sys.exists(export .. "/config.json") and not opts.overwrite then
    cli.fail(string.format("%s already holds a model: pass --overwrite to replace "
                           .. "it, or choose another --export", export))
  end
  if opts.micro_batch > opts.batch then opts.micro_batch = opts.batch end
  opts.device = wiring.device(opts.device)  -- auto: cuda when present; checked first
  local run <close> = runs.open_run(opts.out, identity(opts), opts)

  local t0 = sys.now()
  local corpus, how = run_corpus(opts)
  log.info("corpus", {examples = #corpus, [how] = true, seconds = string.format("%.1f", sys.now() - t0)})
  if opts.corpus_only then
    run:close()
    log.info("corpus only", {out = opts.out, resume = "--resume"})
    return nil
  end
  local init = opts.out .. "/init"
  if not sys.exists(init .. "/config.json") then write_init(init, corpus, opts) end
  local pol = cli.try("cannot load " .. init .. " on " .. opts.device, policy.load, init,
                      {device = opts.device, dtype = "fp32"})
  local kept, counts = fit(corpus, tokenizer.load(init), opts.max_len)
  log.info("fitted", counts)
  if #kept < opts.batch then cli.fail("fewer examples than a batch fit in --max_len") end

  local trainer = train.sft(pol, {lr = M.lr_at(1, opts), weight_decay = opts.weight_decay,
                                  micro_batch = opts.micro_batch, micro_tokens = opts.micro_tokens,
                                  least_padding = opts.least_padding,
                                  tf32 = opts.tf32, seed = opts.seed})
  local done = runs.resume_trainer(run, trainer, opts.out, "resumed")

  local cache, recent, started = {}, {}, sys.now()
  local elapsed_before = run:get("seconds", 0)
  local last = opts.stop_after > 0 and math.min(opts.stop_after, opts.steps) or opts.steps
  for step = done + 1, last do
    trainer:set_lr(M.lr_at(step, opts))
    local stats = trainer:step(batch_of(kept, step, opts, cache))
    recent[#recent + 1] = stats.loss
    if #recent > 50 then table.remove(recent, 1) end
    local record = {step = step, loss = stats.loss, lr = stats.lr, tokens = stats.tokens,
                    grad_norm = stats.grad_norm, seconds = stats.seconds}
    local out_of_time = opts.time_limit > 0 and sys.now() - started >= opts.time_limit
    local save = step % opts.save_every == 0 or step == last or out_of_time
    run:atomic(function()
      run:log(record)
      if save then
        runs.save_trainer(run, trainer, step)
        run:set("seconds", elapsed_before + sys.now() - started)
      end
    end)
    if step % opts.log_every == 0 or step == opts.steps then
      log.info("step", {step = step, loss = string.format("%.4f", stats.loss),
                        lr = string.format("%.2e", stats.lr),
                        tokens_per_s = string.format("%.0f", stats.tokens / stats.seconds)})
    end
    if out_of_time then break end
  end

  if run:get("step", 0) < opts.steps then
    log.info("stopped", {step = run:get("step", 0), resume = "--resume"})
    run:close()
    return nil
  end
  if #recent < 50 then recent = recorded_losses(opts.out, 50) end
  local mean = 0
  for _, l in ipairs(recent) do mean = mean + l end
  local figures = {corpus = counts, parameters = pol:info().parameter_bytes // 4,  -- fp32
                   final_loss = #recent > 0 and mean / #recent or 0, loss_window = #recent,
                   seconds = run:get("seconds", 0), command_options = command_options(opts)}
  trainer:export(export, {dtype = opts.dtype})
  local f = assert(io.open(export .. "/README.md", "w"))
  f:write(M.model_readme(opts, figures))
  f:close()
  json.write(export .. "/pretrain.json", {settings = identity(opts), device = opts.device,
                                           figures = figures})
  run:close()
  log.info("exported", {dir = export, loss = string.format("%.4f", figures.final_loss)})
  return export, figures
end

function M.main(argv)
  M.run(args.parse(argv, M.spec))
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
