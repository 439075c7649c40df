-- A generated universe of tasks for pretraining: computations drawn afresh, not templates
-- of the suite's. Each task is a full spec (docs/tasks.md: statement, prototype, args,
-- flops, bytes, bound, reference) with two kernels, a straightforward one and an optimised
-- one that uses the techniques its spec lists. Families: elementwise chains, reductions,
-- scans, 1-D and 2-D stencils of drawn shape and weights, triangular and banded products,
-- first-order recurrences, affine gathers and scaled transposes, windows and 2-D filters, an
-- LDL^T factorisation, batches of small DFTs and Walsh-Hadamard transforms, signed expressions
-- (differences, ReLU, clamps, absolute values) elementwise, over rows and in stencils, each with drawn
-- coefficients, shapes and sizes, so that thousands of distinct tasks come out. A task's
-- function and its vectors are named afresh too (entry_name, argument_names).
--
-- No task computes what a held-out task of the suite computes: a drawn task called with
-- what a held-out task is called with (the same types and buffer lengths,
-- universe.same_shape_as_heldout) is drawn again, so no function of the universe has a
-- held-out task's domain.
--
--   local universe = require "universe"
--   local list = universe.draw(1, 500)            -- seed, count: {spec =, kernels = {plain =, optimised =}}
--   local dir = universe.write_dir(list, "/tmp/u")  -- spec files; require("engine.tasks").add_dir(dir)

local rng_of = require("engine.rng").new
local tasks = require "engine.tasks"
local family = require "universe.families"  -- each family's draw of a spec and its kernels

local M = {}

-- What a seed draws changes with this file and universe/families.lua; a model records the
-- version its corpus came from (pretrain.json's universe_version), and audit.lua rebuilds
-- only the current one.
-- 1: ten families, functions named u<N>_<family>; 2: the window and filter2d families;
-- 3: functions named in their family's words (entry_name); 4: the vectors x, y, z, a, b
-- and c renamed per task (argument_names); 5: function names drawn apart from the family
-- (entry_name); 6: the ldlt, dft_blocks and hadamard families (the loops of a symmetric
-- factorisation and of small transforms, which no earlier family showed), checked against
-- their outputs' largest entries (bound.scale "output"); 7: the signed family (differences,
-- signed coefficients, ReLU, clamps, absolute values, row sums of them and 3-point stencils
-- with stated ends: expressions a model trained on positive sums could not write); 8: half
-- the renamed vectors given made-up names (MADE_UP_VECTORS); 9: every function and every
-- renamed vector under a made-up name, no stem or affix from a list; 10: names of three
-- kinds (made-up words, words routines are named with, either with a mark: entry_name).
M.version = 10

M.families = {"elementwise", "reduction", "scan", "stencil1d", "stencil2d", "triangular", "banded",
              "recurrence", "gather", "transpose", "window", "filter2d", "ldlt", "dft_blocks", "hadamard",
              "signed"}

-- Every universe task's name starts "u<number>_", no suite task's does; the function it asks
-- for has a name of its own (entry_name).
M.prefix = "u"

---------------------------------------------------------------------------------------
-- Drawing tasks
---------------------------------------------------------------------------------------

-- What a kernel is called with: its return type, and each parameter's type with, for a
-- buffer, its length when every size variable is 37 and when it is 64 ("void|int|const
-- double*:74,148|..."). Two tasks of different shapes cannot compute the same function.
local function count_at(expr, vars, value)
  if type(expr) == "number" then return expr end
  if type(expr) ~= "string" then return "?" end
  local env = setmetatable({}, {__index = function(_, k) return vars[k] and value or math[k] end})
  local chunk = load("return " .. expr, "=count", "t", env)
  local ok, v = pcall(chunk)
  return ok and v or "?"
end

local function shape_of(spec)
  local p = assert(tasks.parse_prototype(spec.prototype))
  local vars = {}
  for _, size in pairs(spec.sizes) do for k in pairs(size) do vars[k] = true end end
  local parts = {p.returns}
  for _, q in ipairs(p.params) do
    local a = spec.args[q.name] or {}
    local part = (q.const and "const " or "") .. q.type
    if a.count then part = part .. ":" .. count_at(a.count, vars, 37) .. "," .. count_at(a.count, vars, 64) end
    parts[#parts + 1] = part
  end
  return table.concat(parts, "|")
end
M.shape_of = shape_of

local heldout_shapes
-- The held-out task of the suite a spec has the shape of, or nil.
function M.same_shape_as_heldout(spec)
  if not heldout_shapes then
    heldout_shapes = {}
    for _, t in ipairs(tasks.list("heldout")) do heldout_shapes[shape_of(tasks.get(t.name))] = t.name end
  end
  return heldout_shapes[shape_of(spec)]
end

-- The function a task asks for: a name that says nothing of what it computes, so that the
-- only way to write it is to copy it from the prototype. Names drawn from a family's own
-- words (version 3-4) were guessed from the statement instead: a model trained on them wrote
-- a held-out 3 x 3 convolution as `dfilter2d2`, its filter family's name, and never the
-- task's. Up to version 8 a name was a stem of a list (or, in 3 of 10, a made-up word)
-- between a prefix and a suffix of lists, and a model trained so copied the made-up part and
-- wrote the rest from the lists (`daxpy_v2` as `dax2`, `zorbel_kiv` as `zorbel`:
-- docs/models.md). Version 9's names were one or two made-up words, and a model trained on
-- them copied such a name (`zorbel_kiv`) but no name of real words or digits (`scale_add` as
-- `axpy`, `normalize_rows` as `normalizes`, `conv1d` as `sigv`): from version 10 a third of
-- the names are made-up words, a third words routines are named with (none saying what
-- this one computes), and a third either kind with a mark real names carry (a digit, a
-- tile's shape, a type's letters). No name is a held-out task's, a C library function's or
-- a keyword, and no word of one is a word of a held-out task's name, of a user's task's
-- or of the copy probe's (data/train), so that those stay names the model never saw.
local CONSONANTS = {"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"}
local VOWELS = {"a", "e", "i", "o", "u"}
-- Words a made-up name could spell that C or its library already means.
local RESERVED = {["do"] = true, ["if"] = true, main = true, time = true, free = true, exit = true, pow = true,
                  sin = true, cos = true, tan = true, log = true, exp = true, abs = true, div = true,
                  ["goto"] = true, pipe = true, rename = true, remove = true}
M.NAME_WORDS = {"apply", "update", "step", "fast", "blend", "merge", "tile", "pass", "phase", "stage", "inner",
                "outer", "sweep", "fold", "mix", "pack", "split", "join", "base", "core", "unit", "chunk", "part",
                "fill", "walk", "zip", "kern", "proc", "calc", "eval", "loop", "mesh", "grid", "cell", "lane",
                "slab", "strip", "span", "seg", "frame", "layer", "plane", "tick", "batch", "work", "task", "job",
                "op", "go", "hot", "cold", "warm", "quick", "lite", "full", "half", "twin", "pair",
                "trio", "north", "east", "left", "right", "top", "deep", "flat", "wide", "thin", "alpha", "beta",
                "gamma", "delta", "omega", "red", "blue", "green", "gold", "iron", "stone", "river", "cloud"}
-- The parts of the names a model is tested on as never seen: the held-out tasks', the
-- users' tasks' and the copy probe's (data/train; tests/experiments/test_universe.lua checks
-- that every part of theirs is here). A drawn name holds none: a part of three letters or
-- more nowhere in it, a shorter one as none of its words.
M.UNSEEN_NAME_PARTS = {"cholesky", "conv1d", "conv2d", "3x3", "fft", "lu", "nopiv", "normalize", "rows", "relu", "row",
                       "sums", "running", "max", "smooth3", "smooth", "softmax", "sq", "diff", "daxpy", "v2", "scale",
                       "add", "zorbel", "kiv"}

function M.holds_unseen_part(name)
  for _, part in ipairs(M.UNSEEN_NAME_PARTS) do
    if #part >= 3 and name:find(part, 1, true) then return part end
  end
  for word in name:gmatch("[^_]+") do
    for _, part in ipairs(M.UNSEEN_NAME_PARTS) do
      if #part < 3 and word == part then return part end
    end
  end
  return nil
end

-- The marks a name of version 10 may end with.
local function mark(rng)
  local d = rng:pick({"2", "3", "4", "5", "6", "7", "8", "9"})
  local kind = rng:int(1, 6)
  if kind == 1 then return d end
  if kind == 2 then return "_" .. d end
  if kind == 3 then return "_" .. rng:pick({"2x2", "4x4", "8x8", "2x4", "4x8", "16x4"}) end
  if kind == 4 then return "_" .. rng:pick({"f64", "d", "nt", "tn", "ip", "ex"}) end
  if kind == 5 then return "_x" .. d end
  return "_" .. rng:pick({"a", "b", "c", "k", "r", "s"}) .. d
end

-- Two or three consonant-vowel syllables and, half the time, a consonant: "tume", "zorbel".
local function made_up(rng)
  local parts = {}
  for i = 1, rng:int(2, 3) do parts[i] = rng:pick(CONSONANTS) .. rng:pick(VOWELS) end
  if rng:chance(0.5) then parts[#parts + 1] = rng:pick(CONSONANTS) end
  return table.concat(parts)
end

local function made_up_name(rng)
  local name = made_up(rng)
  if rng:chance(0.5) then name = name .. "_" .. made_up(rng) end
  return name
end

local function words_name(rng)
  local words = {}
  for i = 1, rng:int(1, 3) do words[i] = rng:pick(M.NAME_WORDS) end
  return table.concat(words, rng:chance(0.8) and "_" or "")
end

-- `texts`: what the task writes with its name (statement and kernels), where a name of
-- words must not stand already as a word of its own.
local function entry_name(rng, texts)
  for _ = 1, 20 do
    local kind = rng:int(1, 3)
    local name
    if kind == 1 then name = made_up_name(rng)
    elseif kind == 2 then name = words_name(rng)
    else name = (rng:chance(0.5) and made_up_name(rng) or words_name(rng)) .. mark(rng) end
    local taken = false
    for _, text in ipairs(texts or {}) do
      if text:find("%f[%w_]" .. name .. "%f[^%w_]") then taken = true end
    end
    if not RESERVED[name] and not taken and not M.holds_unseen_part(name) then return name end
  end
  return "routine"
end
M.entry_name = entry_name  -- pretrain.lua --rename_share: the suite's tasks under such names

-- The families write their vectors x, y and z (inputs x and z, output y, in that order) and
-- the elementwise ones' inputs a, b and c;
-- each task renames them, so that a model learns to copy a prototype's names instead of
-- one convention (a model trained on it wrote a user's (x, y, z) task as (x, z, y)). A name
-- is kept, or drawn from these where no word of the task's texts already is it.
local VECTOR_NAMES = {
  input = {"x", "y", "z", "u", "v", "w", "p", "q", "in", "src", "vals", "data", "lhs", "rhs", "xs", "ys", "zs", "inp",
           "a1", "b1", "vec", "arr"},
  output = {"x", "y", "z", "u", "v", "w", "p", "q", "dst", "out", "res", "xs", "ys", "zs", "buf", "vec", "arr", "r"},
}

-- The share of renamed vectors given a made-up name (from version 8; all of them from 9): a
-- name no prior predicts, which a kernel writes at every use, so that copying names from the
-- prototype is what its loss rewards most often (the fifth model copied a function's name
-- piece by piece with probability near 0, the sixth, at a half, 0.46: docs/models.md). The
-- lists below remain for a made-up name the task's texts already use.
local MADE_UP_VECTORS = 1.0

-- The families whose statements name their inputs a, b and c only indexed ("a[i]"): there
-- they are renamed too; elsewhere an "a", "b" or "c" is a word a statement uses bare (a
-- filter "c a 2x4 filter", a column index).
local INDEXED_ONLY = {elementwise = true, reduction = true, scan = true, signed = true}

-- {old = new} for the x, y and z (and in INDEXED_ONLY families a, b and c) of a task's
-- prototype; texts: every text the names stand in.
local function argument_names(rng, fam, prototype, texts)
  local taken = {}
  for _, text in ipairs(texts) do
    for word in text:gmatch("[%a_][%w_]*") do taken[word] = true end
  end
  local map = {}
  for _, old in ipairs(INDEXED_ONLY[fam] and {"x", "y", "z", "a", "b", "c"} or {"x", "y", "z"}) do
    local decl = prototype:match("([%w_ ]*)%*" .. old .. "%f[^%w_]")
    if decl and rng:chance(0.7) then
      local fresh = {}
      for _, name in ipairs(VECTOR_NAMES[decl:find("const") and "input" or "output"]) do
        if not taken[name] then fresh[#fresh + 1] = name end
      end
      if rng:chance(MADE_UP_VECTORS) then
        local name = made_up(rng)
        if not (taken[name] or RESERVED[name]) then fresh = {name} end
      end
      if #fresh > 0 then
        map[old] = rng:pick(fresh)
        taken[map[old]] = true
      end
    end
  end
  return map
end

-- Whether the word at text[s..e] is the "x" of a dimension ("n x n", "(m + 4) x (n + 4)").
local function dimension_x(text, s, e, sizes)
  local before = text:sub(1, s - 1):match("(%S+)%s+$")
  local after = text:sub(e + 1):match("^%s+(%S+)")
  if not (before and after) then return false end
  local left = before:match("%)$") or before:match("^%d+$") or sizes[before]
  local right = after:match("^%(") or after:match("^%d") or sizes[after:match("^[%a_][%w_]*") or ""]
  return left and right and true or false
end

-- Words of prose that are English too: renamed only where indexed ("a[i]", not "a sum").
local ARTICLES = {a = true, b = true, c = true}

-- text with each word of map replaced at once (x -> y and y -> x swap); in prose
-- (code = false) the "x" of a dimension and an unindexed a, b or c stay.
local function renamed(text, map, code, sizes)
  return (text:gsub("()%f[%w_]([%a_][%w_]*)()", function(s, word, e)
    local new = map[word]
    if not new then return nil end
    if not code and word == "x" and dimension_x(text, s, e - 1, sizes) then return nil end
    if not code and ARTICLES[word] and text:sub(e, e) ~= "[" then return nil end
    return new
  end))
end

-- Task `index` of the universe drawn with `seed`: {spec =, kernels = {plain =, optimised =}}.
-- The same seed and index give the same task in any process.
function M.task(seed, index, only_family)
  local rng = rng_of(string.format("universe %d %d", seed, index))
  for _ = 1, 20 do
    local fam = only_family or rng:pick(M.families)
    local body = family[fam](rng)
    local name = string.format("%s%d_%s", M.prefix, index, fam)
    local entry = entry_name(rng, {body.statement, body.reference, body.optimised})
    local map = argument_names(rng, fam, body.prototype, {body.statement, body.bound.why, body.reference,
                                                          body.optimised})
    local sizes = {}
    for _, size in pairs(body.sizes) do for k in pairs(size) do sizes[k] = true end end
    local function named(text) return (renamed(text, map, true, sizes):gsub("NAME", entry)) end
    local function prose(text) return renamed(text, map, false, sizes) end
    local args = {}
    for k, v in pairs(body.args) do args[map[k] or k] = v end
    local spec = {name = name, family = "universe_" .. fam, split = "train", statement = prose(body.statement),
                  prototype = named(body.prototype), sizes = body.sizes, args = args, flops = body.flops,
                  bytes = body.bytes, roofline = body.roofline,
                  bound = {factor = body.bound.factor, scale = body.bound.scale or "inputs",  -- a family's own, or
                           why = prose(body.bound.why)},                                -- its terms' magnitudes
                  techniques = body.techniques, reference = named(body.reference)}
    if not M.same_shape_as_heldout(spec) then
      return {spec = spec, kernels = {plain = named(body.reference), optimised = named(body.optimised)}}
    end
  end
  error("universe.task: no task unlike the held-out ones in 20 draws (seed " .. seed .. ", index " .. index .. ")")
end

function M.draw(seed, count, only_family)
  local out = {}
  for i = 1, count do out[i] = M.task(seed, i, only_family) end
  return out
end

---------------------------------------------------------------------------------------
-- Spec files
---------------------------------------------------------------------------------------

local function lua_value(v, indent)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "number" then return math.type(v) == "integer" and tostring(v) or string.format("%.17g", v) end
  if type(v) == "boolean" then return tostring(v) end
  assert(type(v) == "table", "universe: cannot write a " .. type(v))
  local pad = indent .. "  "
  local parts = {}
  for _, x in ipairs(v) do parts[#parts + 1] = pad .. lua_value(x, pad) end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #v) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    parts[#parts + 1] = string.format("%s[%s] = %s", pad, lua_value(k, pad), lua_value(v[k], pad))
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

-- A spec as the source of its file.
function M.spec_source(spec)
  return "-- A task of the generated universe (scripts/pretraining/universe.lua).\nreturn "
    .. lua_value(spec, "") .. "\n"
end

-- Writes each task's spec to dir/NAME.lua (dir made if missing); returns dir.
function M.write_dir(list, dir)
  os.execute(string.format("mkdir -p %q", dir))
  for _, t in ipairs(list) do
    local f = assert(io.open(dir .. "/" .. t.spec.name .. ".lua", "w"))
    f:write(M.spec_source(t.spec))
    f:close()
  end
  return dir
end

---------------------------------------------------------------------------------------
-- Pretraining examples
---------------------------------------------------------------------------------------

-- n examples, each of a task of its own (index 1..n of the universe of `opts.seed`):
-- half ask the fixed prompt (every technique: the optimised kernel answers), half the
-- first stage (plain C: the straightforward kernel answers). The tasks' specs are written to
-- opts.dir (default a fresh temporary folder) and added to the suite's folders, so the
-- prompts and the audit read them as any task. Each example: {kind, task, isa, size,
-- messages, completion}.
function M.corpus(n, opts)
  opts = opts or {}
  if math.type(n) ~= "integer" or n < 0 then error("universe.corpus: n must be a non-negative integer", 2) end
  if n == 0 then return {} end
  local prompts = require "method.prompts"
  local list = M.draw(opts.seed or 1, n)
  local dir = opts.dir
  if not dir then
    dir = os.tmpname()
    os.remove(dir)
  end
  tasks.add_dir(M.write_dir(list, dir))
  local rng = rng_of(string.format("universe corpus %d", opts.seed or 1))
  local isas = opts.isa or {avx512 = 1, avx2 = 1}
  local out = {}
  for i, u in ipairs(list) do
    local isa = type(isas) == "string" and isas or rng:weighted(isas)
    local task = {name = u.spec.name, size = "train", isa = isa}
    local ex = {task = u.spec.name, isa = isa, size = "train"}
    local code
    if rng:chance(0.5) then
      local all = prompts.fixed(task)
      ex.kind, ex.messages, code = "fixed", all[rng:int(1, #all)], u.kernels.optimised
    else
      ex.kind, ex.messages, code = "write", prompts.write(1, task), u.kernels.plain
    end
    ex.completion = "```c\n" .. code:gsub("%s+$", "") .. "\n```"
    out[i] = ex
  end
  return out
end

return M
