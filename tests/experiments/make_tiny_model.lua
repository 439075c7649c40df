-- Writes the tiny random model the end-to-end test runs the real primitives with:
-- engine make_tiny_model.lua DIR. Its tokenizer learns from the prompts and the seed kernel.
local tiny_model = require "tiny_model"
local prompts = require "method.prompts"

local dir = assert(arg[1], "usage: make_tiny_model.lua DIR")
local texts = {prompts.seed_kernel}
for _, msgs in ipairs(prompts.fixed()) do texts[#texts + 1] = prompts.render(msgs) end
tiny_model.write(dir, {vocab_size = 512, hidden = 32, layers = 2, seed = 7, texts = texts})
print("tiny model written to " .. dir)
