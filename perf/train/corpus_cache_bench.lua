-- What a resumed pretrain.lua call saves by reading its run's corpus back (corpus.jsonl)
-- instead of drawing it again: the corpus of the general model's settings built, written
-- and read, in one run.
--
--   build/engine perf/train/corpus_cache_bench.lua [--examples=60000] [--kernel_names=fixed]
local args = require "engine.args"

local opts = args.parse(arg, {
  description = "pretrain.lua's corpus drawn against read back from the run directory",
  options = {
    {"examples", 60000, "examples in the corpus", min = 1},
    {"universe_share", 0.6, "share of the generated universe", min = 0, max = 1},
    {"task_share", 0.2, "share of the suite's other training tasks", min = 0, max = 1},
    {"kernel_names", "fixed", "names in the matmul and suite-task kernels", choices = {"drawn", "fixed"}},
  },
})
local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
local file = os.tmpname()
local t0 = sys.now()
local corpus = pretrain.build_corpus({examples = opts.examples, universe_share = opts.universe_share,
                                      task_share = opts.task_share, kernel_names = opts.kernel_names, seed = 1,
                                      isa = {"avx512", "avx2"}, defect_rate = 0.15})
local t1 = sys.now()
local f = assert(io.open(file, "w"))
for _, ex in ipairs(corpus) do f:write(json.encode({prompt = ex.prompt, completion = ex.completion}), "\n") end
f:close()
local t2 = sys.now()
local back = {}
for line in io.lines(file) do back[#back + 1] = json.decode(line) end
local t3 = sys.now()
local same = #back == #corpus
for i = 1, #corpus do same = same and back[i].prompt == corpus[i].prompt and back[i].completion == corpus[i].completion end
os.remove(file)
print(string.format("%d examples: drawn in %.1f s, written in %.1f s, read back in %.1f s (%.1fx faster than "
                    .. "drawing); read back the same: %s", #corpus, t1 - t0, t2 - t1, t3 - t2, (t1 - t0) / (t3 - t2),
                    tostring(same)))
