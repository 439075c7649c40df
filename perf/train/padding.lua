-- What an SFT step computes in padding: the rows of a step sorted longest first and cut into
-- micro-batches of at most --budget tokens (rows x the longest), either filled in order (the
-- trainer's default) or where the fewest padded tokens are computed (--least_padding,
-- train/micro_batches.cpp). Prints, for 64 and 256 examples a step, padded over real tokens,
-- the same for attention's rows x length^2, and micro-batches a step, on sft_step_bench.sh's
-- corpus (4,000 examples, universe 0.6, tasks 0.2) with a 2,048-id sub-line tokenizer trained
-- on its first 3,000 examples, as pretrain.lua trains one. No model runs: counts only.
--
--   build/engine perf/train/padding.lua [--budget=65536] [--steps=200]
local args = require "engine.args"
local tokenizer = require "engine.tokenizer"
local tiny_model = require "tiny_model"
local train = require "engine.train"

local opts = args.parse(arg, {
  description = "Padded tokens of an SFT step's micro-batches, filled or cut for the least padding",
  options = {
    {"budget", 65536, "tokens a micro-batch may hold with its padding", min = 1},
    {"steps", 200, "steps drawn for each batch size", min = 1},
  },
})

local pretrain = dofile(engine.scripts[1] .. "/pretrain.lua")
local corpus = pretrain.build_corpus({examples = 4000, universe_share = 0.6, task_share = 0.2, seed = 1,
                                      isa = {"avx512", "avx2"}, defect_rate = 0.15})
local dir = os.tmpname()
os.remove(dir)
local texts = {}
for i = 1, 3000 do texts[i] = corpus[i].prompt .. corpus[i].completion end
tiny_model.write(dir, {vocab_size = 2048, hidden = 8, layers = 1, heads = 1, kv_heads = 1, intermediate = 8,
                       seed = 1, max_position = 4096, texts = texts, pattern = ""})
local tok = tokenizer.load(dir)
local lengths = {}
for _, ex in ipairs(corpus) do
  local n = #tok:encode(ex.prompt) + #tok:encode(ex.completion) + 1
  if n <= 2048 then lengths[#lengths + 1] = n end
end

local total = 0
for _, n in ipairs(lengths) do total = total + n end
print(string.format("%d examples, mean %.0f tokens; budget %d tokens a micro-batch; %d steps each",
                    #lengths, total / #lengths, opts.budget, opts.steps))
print(string.format("%-10s %-14s %16s %18s %14s", "batch", "cuts", "padded / real", "attention ratio", "micro-batches"))
for _, batch in ipairs{64, 256} do
  for _, way in ipairs{"fill", "least_padding"} do
    local r = require("engine.rng").new("padding " .. batch)  -- the same steps for both ways
    local real, padded, attn_real, attn_pad, micros = 0, 0, 0, 0, 0
    for _ = 1, opts.steps do
      local rows = {}
      for i = 1, batch do rows[i] = lengths[r:int(1, #lengths)] end
      table.sort(rows, function(x, y) return x > y end)
      local at = 1
      for _, size in ipairs(train.micro_cuts(rows, opts.budget, way == "least_padding")) do
        micros = micros + 1
        padded = padded + size * rows[at]
        attn_pad = attn_pad + size * rows[at] ^ 2
        for k = at, at + size - 1 do real, attn_real = real + rows[k], attn_real + rows[k] ^ 2 end
        at = at + size
      end
    end
    print(string.format("%-10d %-14s %15.3fx %17.3fx %14.2f", batch, way, padded / real, attn_pad / attn_real,
                        micros / opts.steps))
  end
end
