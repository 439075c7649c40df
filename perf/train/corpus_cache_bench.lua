-- What a resumed pretrain.lua call saves by reading its run's corpus back (corpus.jsonl)
-- instead of drawing it again: pretrain.run_corpus twice on the general model's settings,
-- drawing and writing, then reading, in one run.
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
-- pretrain.run_corpus in a fresh run directory: the first call draws and writes the corpus,
-- the second (a resumed call's) reads it back.
local dir = os.tmpname()
os.remove(dir)
sys.mkdir(dir)
local settings = {out = dir, examples = opts.examples, universe_share = opts.universe_share,
                  task_share = opts.task_share, kernel_names = opts.kernel_names, seed = 1,
                  isa = {"avx512", "avx2"}, defect_rate = 0.15}
local t0 = sys.now()
local corpus, built = pretrain.run_corpus(settings)
local t1 = sys.now()
local back, read = pretrain.run_corpus(settings)
local t2 = sys.now()
local same = built == "built" and read == "read" and #back == #corpus
for i = 1, #corpus do same = same and back[i].prompt == corpus[i].prompt and back[i].completion == corpus[i].completion end
os.remove(dir .. "/corpus.jsonl")
os.remove(dir)
print(string.format("%d examples: drawn and written in %.1f s, read back in %.1f s (%.1fx faster); read back the "
                    .. "same: %s", #corpus, t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1), tostring(same)))
