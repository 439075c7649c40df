-- Fresh draws of the generated universe written as task files: computations of the kinds a
-- universe model's corpus holds, but not the ones it was shown. The first --draws tasks of
-- --seed (no corpus uses 77 or 78), those of --families only where given (at most
-- --per_family of each), until --count are kept; with --corpus (a pretraining run's
-- corpus.jsonl) a task whose statement stands word for word in it is left out, as small
-- families draw some statements again. model_check.lua then asks them as a user's tasks.
--
--   engine universe_tasks.lua --out=/tmp/fresh --corpus=/tmp/general/pt/corpus.jsonl
--   engine model_check.lua --model=DIR --split=user --task_dir=/tmp/fresh --n=8
--   engine universe_tasks.lua --out=/tmp/near --seed=78 --draws=600 --count=16 \
--     --families=window,filter2d,ldlt,dft_blocks --per_family=4    # the held-out tasks' nearest

local args = require "engine.args"
local cli = require "core.cli"
local json = require "engine.json"
local universe = require "universe"

local M = {}

M.spec = {
  description = "Writes fresh draws of the generated universe as task files (model_check.lua --split=user "
    .. "--task_dir=OUT asks them), less those whose statement a corpus holds.",
  options = {
    {"out", nil, "the folder the task files are written to", type = "string"},
    {"seed", 77, "the universe's seed"},
    {"draws", 24, "how many tasks of the seed are looked at, in order", min = 1},
    {"count", 24, "at most this many are kept", min = 1},
    {"families", "", "keep only these families, comma-separated (window, filter2d, ldlt, ...); all when empty"},
    {"per_family", 0, "at most this many of each family (0: no limit)", min = 0},
    {"corpus", "", "a pretraining corpus (corpus.jsonl): leave out a task whose statement it holds"},
  },
}

-- The statements a corpus holds, as a text to search (JSON-escaped, as the file stores them).
local function corpus_text(path)
  if path == "" then return nil end
  local f = io.open(path, "r")
  if not f then cli.fail("--corpus: cannot read " .. path) end
  local text = f:read("a")
  f:close()
  return text
end

-- Whether `text` (a corpus file's) holds `statement` word for word.
function M.in_corpus(text, statement)
  return text ~= nil and text:find(json.encode(statement):sub(2, -2), 1, true) ~= nil
end

-- Draws, keeps and writes; returns {kept = {specs}, left_out = {specs whose statement the corpus holds}}.
function M.run(opts)
  if not opts.out or opts.out == "" then cli.fail("--out: name the folder to write the tasks to") end
  local wanted = nil
  if opts.families ~= "" then
    wanted = {}
    for name in opts.families:gmatch("[^,%s]+") do wanted["universe_" .. name] = 0 end
  end
  local corpus = corpus_text(opts.corpus)
  local chosen, left_out, met = {}, {}, {}  -- met: the families drawn, kept or not
  for _, t in ipairs(universe.draw(opts.seed, opts.draws)) do
    if #chosen >= opts.count then break end
    local family = t.spec.family
    met[family] = true
    if not wanted or (wanted[family] and (opts.per_family == 0 or wanted[family] < opts.per_family)) then
      if M.in_corpus(corpus, t.spec.statement) then
        left_out[#left_out + 1] = t.spec
      else
        if wanted then wanted[family] = wanted[family] + 1 end
        chosen[#chosen + 1] = t
      end
    end
  end
  for name in pairs(wanted or {}) do
    if not met[name] then
      cli.fail(string.format("--families: no task of family '%s' in the first %d draws of seed %d", name:sub(10),
                             opts.draws, opts.seed))
    end
  end
  universe.write_dir(chosen, opts.out)
  local kept = {}
  for i, t in ipairs(chosen) do kept[i] = t.spec end
  return {kept = kept, left_out = left_out}
end

function M.main(argv)
  local opts = args.parse(argv, M.spec)
  local r = M.run(opts)
  for _, s in ipairs(r.kept) do print(s.name, s.family, s.statement) end
  for _, s in ipairs(r.left_out) do print("left out (in the corpus): " .. s.name, s.family) end
  print(string.format("%d tasks in %s (universe version %d, seed %d)", #r.kept, opts.out, universe.version, opts.seed))
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
