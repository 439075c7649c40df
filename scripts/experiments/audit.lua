-- Whether a model was pretrained on the held-out split (heldout_split.lua). The corpus is
-- rebuilt from the model's pretrain.json (pretrain.lua's settings: kernelgen's corpus
-- version, seed, examples, shares of the suite's and the CUDA tasks, ISAs, defect rate,
-- share of prompts in drawn words; no corpus_version: 1, the version before the split), and
-- every example (prompt and completion) is looked through for each kind of held-out item:
-- an exact held-out prompt, a held-out size of its task, a run of 8 words of a held-out
-- wording beyond the training prompts' boilerplate, a held-out task's name, statement or
-- prototype (heldout_split.lua defines each). Counts, and a few examples per kind. The
-- corpus is the one pretrain.lua built, before --max_len dropped its longest examples: an
-- overlap in one of those counts.
-- A model without pretrain.json (a Hugging Face checkpoint, a fine-tuned export) is
-- "corpus unknown", never clean. heldout.lua runs the audit on the runs' model.
--
--   engine audit.lua models/small
--   engine audit.lua models/small-cuda --json
--   engine audit.lua models/mine --matmul_sizes=288    # also a size a comparison asks

local cli = require "core.cli"
local kernelgen = require "kernelgen"
local split = require "method.heldout_split"
local universe = require "universe"
local wordings = require "wordings"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."

local M = {}

M.spec = {
  description = "Rebuilds a model's pretraining corpus from its pretrain.json and reports what "
    .. "it holds of the held-out split, by kind (exact prompt, size, wording, task).",
  positional = "MODEL_DIR",
  options = {
    {"json", false, "print the result as JSON"},
    {"matmul_sizes", "", "more held-out matmul sizes (M = N = K) to look for, a list '288,320' "
     .. "(the split's: " .. table.concat(split.matmul_sizes, ", ") .. ")"},
    {"show", 3, "examples shown per kind", min = 0},
    cli.debug_option,
  },
}

-- The settings of pretrain.json that rebuild the corpus.
M.corpus_keys = {"corpus_version", "seed", "examples", "defect_rate", "task_share", "cuda_share", "universe_share",
                 "universe_version", "kernel_names", "wording_share", "wording_version", "rename_share", "isa"}

-- What each kind of overlap holds in the pairs of a corpus (pretrain.build_corpus's):
-- {[kind] = {count =, examples = {{index =, task =, example_kind =, item =}, ...}}}.
-- opts: matmul_sizes, show (examples kept per kind).
function M.audit_pairs(pairs_, opts)
  opts = opts or {}
  local show = opts.show or 3
  local kinds = {}
  for _, k in ipairs(split.kinds) do kinds[k] = {count = 0, examples = {}} end
  for i, p in ipairs(pairs_) do
    local found = split.overlaps(p, {matmul_sizes = opts.matmul_sizes})
    for kind, item in pairs(found) do
      local k = kinds[kind]
      k.count = k.count + 1
      if #k.examples < show then
        k.examples[#k.examples + 1] = {index = i, task = p.task, example_kind = p.kind, item = item}
      end
    end
  end
  return kinds
end

local function sizes_list(text)
  local out = {}
  for _, s in ipairs(split.matmul_sizes) do out[#out + 1] = s end
  for v in (text or ""):gmatch("[^,%s]+") do
    local n = math.tointeger(tonumber(v))
    if not n or n < 1 then cli.fail("--matmul_sizes: '" .. v .. "' is not a size") end
    out[#out + 1] = n
  end
  return out
end

-- The corpus settings of a model's pretrain.json, or nil and why not.
function M.settings(dir)
  local file = dir .. "/pretrain.json"
  if not sys.exists(file) then return nil, "no pretrain.json: the corpus it was trained on is not recorded" end
  local ok, info = pcall(json.read, file)
  if not ok or type(info) ~= "table" or type(info.settings) ~= "table" then
    return nil, "pretrain.json does not hold pretrain.lua's settings"
  end
  local s = {}
  for _, k in ipairs(M.corpus_keys) do s[k] = info.settings[k] end
  s.corpus_version = s.corpus_version or 1
  s.cuda_share = s.cuda_share or 0
  s.task_share = s.task_share or 0
  s.universe_share = s.universe_share or 0
  s.wording_share = s.wording_share or 0
  s.wording_version = s.wording_share > 0 and (s.wording_version or 1) or nil
  if s.wording_version and s.wording_version > wordings.version then
    return nil, string.format("its prompts were drawn from framings of version %d, newer than this tree's (%d)",
                              s.wording_version, wordings.version)
  end
  s.rename_share = s.rename_share or 0
  local universe_version = universe.version
  if s.universe_share > 0 and s.universe_version ~= universe_version then
    return nil, string.format("its corpus drew the generated universe at %s; this tree draws version %d, so the "
                              .. "corpus cannot be rebuilt", s.universe_version and "version " .. s.universe_version
                              or "a version before they were recorded", universe_version)
  end
  if math.type(s.seed) ~= "integer" or math.type(s.examples) ~= "integer" then
    return nil, "pretrain.json names no integer seed and examples of the corpus"
  end
  if s.corpus_version > kernelgen.corpus_version then
    return nil, string.format("corpus version %d is newer than this kernelgen's (%d)", s.corpus_version,
                              kernelgen.corpus_version)
  end
  return s
end

local memo = {}

-- The audit of a model directory: {model =, status = "clean" | "overlaps" | "unknown",
-- reason = (unknown), settings =, examples =, tasks = {[task family] = count}, split =
-- {...}, kinds = audit_pairs's}. opts: matmul_sizes (a list added to the split's; or the
-- --matmul_sizes text), show. Kept per process for the same model and sizes.
function M.model(dir, opts)
  opts = opts or {}
  local sizes = type(opts.matmul_sizes) == "table" and opts.matmul_sizes or sizes_list(opts.matmul_sizes)
  local held_tasks, cuda = {}, {}
  for _, t in ipairs(split.tasks()) do held_tasks[#held_tasks + 1] = t.name end
  for _, t in ipairs(split.cuda_tasks()) do cuda[#cuda + 1] = t.name end
  local result = {model = dir, split = {matmul_sizes = sizes, tasks = held_tasks, cuda_tasks = cuda,
                                        run_words = split.run_words, task_sizes = "each task's \"heldout\""}}
  local settings, why = M.settings(dir)
  if not settings then
    result.status, result.reason = "unknown", why
    return result
  end
  local key = json.encode({dir, settings, sizes, opts.show})
  if memo[key] then return memo[key] end
  result.settings = settings
  local build = dofile(here .. "/pretrain.lua").build_corpus
  local s = setmetatable({check = false}, {__index = settings})
  local corpus = build(s)
  result.examples = #corpus
  result.tasks = {}
  for _, p in ipairs(corpus) do
    local family = p.task == "matmul" and "matmul" or p.task:match("^cuda:") and "cuda"
                   or p.task:match("^" .. universe.prefix .. "%d+_") and "universe" or "suite"
    result.tasks[family] = (result.tasks[family] or 0) + 1
  end
  result.kinds = M.audit_pairs(corpus, {matmul_sizes = sizes, show = opts.show})
  local any = false
  for _, k in pairs(result.kinds) do any = any or k.count > 0 end
  result.status = any and "overlaps" or "clean"
  memo[key] = result
  return result
end

-- The overlaps of a result in a few words: "held-out size 980 examples, exact held-out
-- prompt 190 examples".
function M.counts_text(result)
  local parts = {}
  for _, kind in ipairs(split.kinds) do
    local k = result.kinds and result.kinds[kind]
    if k and k.count > 0 then parts[#parts + 1] = string.format("%s %d examples", split.kind_names[kind], k.count) end
  end
  return table.concat(parts, ", ")
end

-- The result in lines.
function M.text(result)
  local lines = {}
  if result.status == "unknown" then
    return {result.model .. ": corpus unknown (" .. result.reason .. "); not proven to be disjoint from the "
            .. "held-out split"}
  end
  local s = result.settings
  lines[1] = string.format("%s: corpus rebuilt from pretrain.json: version %d, seed %d, %d examples "
                           .. "(%d matmul, %d of the suite's tasks, %d CUDA%s)", result.model, s.corpus_version,
                           s.seed, result.examples, result.tasks.matmul or 0, result.tasks.suite or 0,
                           result.tasks.cuda or 0, result.tasks.universe and string.format(
                             ", %d of the generated universe at version %d", result.tasks.universe,
                             s.universe_version) or "")
    .. (s.wording_share > 0 and string.format(", %g%% of the prompts in drawn words (framings version %d)",
                                              100 * s.wording_share, s.wording_version) or "")
    .. (s.rename_share > 0 and string.format(", %g%% of the suite's tasks under drawn names", 100 * s.rename_share) or "")
  lines[#lines + 1] = string.format("held-out split: matmul at %s; each task's size \"heldout\"; the held-out "
                                    .. "wordings (runs of %d words); the tasks %s and the CUDA tasks %s",
                                    table.concat(result.split.matmul_sizes, ", "), result.split.run_words,
                                    table.concat(result.split.tasks, ", "), table.concat(result.split.cuda_tasks, ", "))
  for _, kind in ipairs(split.kinds) do
    local k = result.kinds[kind]
    lines[#lines + 1] = string.format("- %s: %d examples", split.kind_names[kind], k.count)
    for _, e in ipairs(k.examples) do
      lines[#lines + 1] = string.format("    example %d (%s, %s): %s", e.index, e.task, e.example_kind or "-", e.item)
    end
  end
  lines[#lines + 1] = result.status == "clean" and "clean: no example holds an item of the held-out split"
    or "overlaps: " .. M.counts_text(result)
  return lines
end

function M.main(argv)
  local opts, dirs = cli.parse_dirs(argv, M.spec, "engine audit.lua MODEL_DIR [--json]", 1)
  local result = M.model(dirs[1], {matmul_sizes = opts.matmul_sizes, show = opts.show})
  if opts.json then
    io.stdout:write(json.encode(result), "\n")
  else
    io.stdout:write(table.concat(M.text(result), "\n"), "\n")
  end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
