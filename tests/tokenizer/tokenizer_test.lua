-- engine.tokenizer from scripts: the real Qwen3 tokenizer and a trained one.
local t = require "engine.test"

local qwen_dir = assert(os.getenv("QWEN3_TOKENIZER_DIR"), "QWEN3_TOKENIZER_DIR is not set")
local fixtures = assert(os.getenv("TOKENIZER_FIXTURE_DIR"), "TOKENIZER_FIXTURE_DIR is not set")
local tok = tokenizer.load(qwen_dir)
local ref = json.read(fixtures .. "/tokenizer_qwen3_ref.json")

t.test("encode gives the reference ids and decode the reference text", function()
  for i, c in ipairs(ref.cases) do
    t.eq(tok:encode(c.text), c.ids, "case " .. i)
    t.eq(tok:decode(c.ids), c.decoded, "case " .. i)
    t.eq(tok:decode(c.ids, {skip_special = true}), c.decoded_skip_special, "case " .. i)
  end
end)

t.test("special = false encodes special token texts as text", function()
  local ids = tok:encode("x<|im_end|>", {special = false})
  t.ne(ids[#ids], tok:token_to_id("<|im_end|>"))
  t.eq(tok:decode(ids), "x<|im_end|>")
  t.eq(tok:encode("x<|im_end|>")[2], tok:token_to_id("<|im_end|>"))
  t.raises(function() tok:encode("x", {specials = false}) end, "specials")
end)

t.test("chat renders the model's template", function()
  for i, c in ipairs(ref.chat) do
    t.eq(tok:chat(c.messages, {add_generation_prompt = c.add_generation_prompt,
                               enable_thinking = c.enable_thinking}), c.text, "chat " .. i)
  end
  local prompt = tok:chat({{role = "user", content = "hi"}}, {add_generation_prompt = true})
  t.eq(prompt, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
  t.eq(tok:encode(prompt)[1], tok:token_to_id("<|im_start|>"))
end)

t.test("vocabulary lookups and stop ids", function()
  t.eq(tok:vocab_size(), ref.vocab_size)
  t.eq(tok:token_to_id("<|im_end|>"), 151645)
  t.eq(tok:token_to_id("not a token"), nil)
  t.eq(tok:id_to_token(279), "Ġthe")
  t.eq(tok:token_bytes(279), " the")
  local stops = tok:stop_ids()
  local found = false
  for _, id in ipairs(stops) do found = found or id == ref.eos_token_id end
  t.ok(found, "eos in stop ids")
  t.contains(tostring(tok), "vocab 151669")
end)

t.test("bad arguments are reported by name", function()
  t.raises(function() tokenizer.load("/nonexistent/dir") end, "does not exist")
  t.raises(function() tok:decode({1, "x"}) end, "ids[2]")
  t.raises(function() tok:decode({999999999}) end, "999999999")
  t.raises(function() tok:encode("bad\255") end, "not valid UTF-8")
  t.raises(function() tok:chat({{role = "user", text = "hi"}}) end, "unknown option 'text'")
  t.raises(function() tok:chat({{role = "robot", content = "hi"}}) end, "role 'robot'")
  t.raises(function() tok:chat({{role = "user", content = "x"}}, {add_generation = true}) end,
           "add_generation")
  t.raises(function() tokenizer.train({"abc"}, {}) end, "vocab_size")
  t.raises(function() tokenizer.train({"abc"}, {vocab_size = 300, vocab = 1}) end, "vocab")
end)

t.test("train from texts and files, save, load back", function()
  local dir = t.tmpdir()
  local corpus = dir .. "/corpus.txt"
  local f = assert(io.open(corpus, "w"))
  for i = 1, 200 do f:write("for (int i = 0; i < n; ++i) sum += a[i] * b[i]; // ", i, "\n") end
  f:close()
  local trained = tokenizer.train({files = {corpus}, texts = {"hello world, hello tokens"}},
                                  {vocab_size = 300, special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}})
  t.eq(trained:vocab_size() <= 300, true)
  t.eq(trained:stop_ids(), {trained:token_to_id("<|im_end|>")})
  local text = "for (int j = 0; j < m; ++j) <|im_end|>"
  local ids = trained:encode(text)
  t.eq(trained:decode(ids), text)
  t.eq(ids[#ids], trained:token_to_id("<|im_end|>"))
  trained:save(dir .. "/tok")
  local back = tokenizer.load(dir .. "/tok")
  t.eq(back:encode(text), ids)
  t.eq(back:chat({{role = "user", content = "q"}}, {add_generation_prompt = true}),
       "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n")
  t.raises(function() tokenizer.train({files = {dir .. "/missing.txt"}}, {vocab_size = 300}) end,
           "missing.txt")
  t.raises(function() tokenizer.train({"a", 3}, {vocab_size = 300}) end, "texts[2]")
end)

t.test("texts with NUL bytes are trained on whole", function()
  local texts = {}
  for i = 1, 20 do texts[i] = "x\0zzzz" end
  local trained = tokenizer.train(texts, {vocab_size = 300, special_tokens = {}})
  -- "\0zzzz" becomes one token only if the text after the NUL byte reached the trainer
  t.eq(#trained:encode("x\0zzzz"), 2)
end)

t.test("a split pattern of whole lines merges across punctuation", function()
  local code = {}
  for i = 1, 40 do code[i] = "    for (int k = 0; k < K; k++) acc += A[i * K + k];\n" .. "x" .. i .. "\n" end
  local line = "    for (int k = 0; k < K; k++) acc += A[i * K + k];\n"
  local default = tokenizer.train(code, {vocab_size = 400})
  local lines = tokenizer.train(code, {vocab_size = 400, pattern = "[^\n]+\n?|\n"})
  t.ok(#default:encode(line) > 5, "the default pattern splits at punctuation")
  t.eq(#lines:encode(line), 1)
  t.eq(lines:decode(lines:encode(line .. "y = 1;\n")), line .. "y = 1;\n")
  local dir = t.tmpdir()
  lines:save(dir)
  t.eq(tokenizer.load(dir):encode(line), lines:encode(line))
  t.raises(function() tokenizer.train(code, {vocab_size = 400, pattern = "([a-z"}) end,
           "pattern is not a usable regex")
end)

t.run()
