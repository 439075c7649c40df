local t = require "engine.test"

-- The committed tiny random models (tests/policy/fixtures) have no tokenizer: prompts
-- and completions are token ids here.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
local qwen = here .. "/../policy/fixtures/tiny_qwen2"

t.test("policy.load reads a checkpoint and describes it", function()
  local pol = policy.load(qwen, {dtype = "fp32", threads = 1})
  local info = pol:info()
  t.eq(info.model_type, "qwen2")
  t.eq(info.vocab_size, 256)
  t.eq(info.layers, 2)
  t.eq(info.kv_heads, 2)
  t.eq(info.device, "cpu")
  t.eq(info.has_tokenizer, false)
  t.ok(tostring(pol):find("qwen2"))
end)

t.test("random_weights draws a checkpoint's shape without reading its weights", function()
  local dir = t.tmpdir()
  local f = assert(io.open(qwen .. "/config.json"))
  local config = f:read("a")
  f:close()
  f = assert(io.open(dir .. "/config.json", "w"))
  f:write(config)
  f:close()
  t.raises(function() policy.load(dir) end, "safetensors")
  local a, b = policy.load(dir, {random_weights = 3}), policy.load(dir, {random_weights = 3})
  t.eq(a:info().layers, 2)
  local opts = {max_tokens = 5, seed = 1, ignore_eos = true}
  t.eq(a:sample({{5, 6}}, opts)[1][1].tokens, b:sample({{5, 6}}, opts)[1][1].tokens)
  local c = policy.load(dir, {random_weights = 4})
  t.ok(table.concat(c:logprobs({5, 6}, {7, 8, 9}), ",") ~= table.concat(a:logprobs({5, 6}, {7, 8, 9}), ","),
       "another seed, other weights")
  t.raises(function() policy.load(dir, {random_weights = -2}) end, "random_weights")
end)

t.test("a checkpoint padded beyond its tokenizer never samples a padding id", function()
  -- 1024 rows of embedding, a tokenizer of about 300 ids: random weights put most of the
  -- probability on the padding, which no text can hold
  local dir = t.tmpdir()
  local config = json.read(qwen .. "/config.json")
  config.vocab_size = 1024
  json.write(dir .. "/config.json", config)
  local tok = tokenizer.train({"void f(double *x) { x[0] = 1.0; }", "int main(void) { return 0; }"},
                              {vocab_size = 300, special_tokens = {"<|im_start|>", "<|im_end|>"}})
  tok:save(dir)
  local known = tok:vocab_size()
  t.ok(known < 1024, known)
  local pol = policy.load(dir, {random_weights = 5, dtype = "fp32", threads = 1})
  t.eq(pol:info().vocab_size, 1024)
  t.eq(pol:info().output_vocab, known)
  local group = pol:sample({"void"}, {n = 8, max_tokens = 48, seed = 2, ignore_eos = true})[1]
  for _, c in ipairs(group) do
    t.eq(#c.tokens, 48)
    for _, id in ipairs(c.tokens) do t.ok(id < known, "sampled id " .. id .. " beyond the tokenizer's " .. known) end
    t.eq(type(c.text), "string")
    -- scoring sees the same distribution as sampling
    local scored = pol:logprobs(tok:encode("void"), c.tokens)
    for i = 1, #scored do t.near(scored[i], c.logprobs[i], 1e-4) end
  end
  -- without a tokenizer the policy keeps every row
  t.eq(policy.load(qwen):info().output_vocab, 256)
end)

t.test("pol:sample returns n completions per prompt with tokens, log-probs and reasons", function()
  local pol = policy.load(qwen)
  local groups = pol:sample({{5, 6, 7}, {9}}, {n = 3, temperature = 0.8, top_p = 0.9,
                                               max_tokens = 6, seed = 11, ignore_eos = true})
  t.eq(#groups, 2)
  for _, group in ipairs(groups) do
    t.eq(#group, 3)
    for _, c in ipairs(group) do
      t.eq(#c.tokens, 6)
      t.eq(#c.logprobs, 6)
      t.eq(c.finish_reason, "length")
      t.eq(c.text, nil)
      for _, lp in ipairs(c.logprobs) do t.ok(lp <= 0) end
    end
  end
  -- same seed, same samples
  local again = pol:sample({{5, 6, 7}, {9}}, {n = 3, temperature = 0.8, top_p = 0.9,
                                              max_tokens = 6, seed = 11, ignore_eos = true})
  t.eq(again[2][3].tokens, groups[2][3].tokens)
  -- the sampled log-probs are the policy's: scoring the completion gives them back
  local scored = pol:logprobs({5, 6, 7}, groups[1][1].tokens, {temperature = 0.8})
  t.eq(#scored, 6)
  -- top_p changes the distribution, so compare a plain temperature sample instead
  local plain = pol:sample({{5, 6, 7}}, {temperature = 0.8, max_tokens = 6, seed = 3,
                                        ignore_eos = true})[1][1]
  local lp = pol:logprobs({5, 6, 7}, plain.tokens, {temperature = 0.8})
  for i = 1, 6 do t.ok(math.abs(lp[i] - plain.logprobs[i]) < 1e-4, i) end
end)

t.test("a completion is a handle: its ids stay in C++ until asked for", function()
  local pol = policy.load(qwen)
  local c = pol:sample({{5, 6, 7}}, {max_tokens = 4, seed = 2, ignore_eos = true})[1][1]
  t.eq(type(c), "userdata")
  t.contains(tostring(c), "engine.policy.Completion(4 tokens, length)")
  local tokens = c.tokens
  t.eq(type(tokens), "table")
  tokens[1] = -1                      -- a copy: the handle keeps what was sampled
  t.ok(c.tokens[1] ~= -1)
  t.eq(c.nothing, nil)
  -- scoring takes the handle itself
  local by_handle, by_ids = pol:logprobs({5, 6, 7}, c), pol:logprobs({5, 6, 7}, c.tokens)
  t.eq(by_handle, by_ids)
end)

t.test("greedy sampling is deterministic and stop_tokens end it", function()
  local pol = policy.load(qwen)
  local a = pol:sample({{1, 2, 3}}, {temperature = 0, max_tokens = 8, ignore_eos = true})[1][1]
  local b = pol:sample({{1, 2, 3}}, {temperature = 0, max_tokens = 8, n = 2,
                                     stop_tokens = {a.tokens[3]}})[1]
  t.eq(b[1].tokens, b[2].tokens)
  t.eq(b[1].finish_reason, "stop")
  t.eq(b[1].tokens[#b[1].tokens], a.tokens[3])
end)

t.test("bad arguments are clear errors", function()
  t.raises(function() policy.load(here .. "/nowhere") end, "no such checkpoint directory")
  t.raises(function() policy.load(here) end, "no config.json")
  t.raises(function() policy.load(qwen, {dtype = "int4"}) end, "dtype")
  t.raises(function() policy.load(qwen, {devcie = "cpu"}) end, "unknown option 'devcie'")
  local pol = policy.load(qwen)
  t.raises(function() pol:sample({"text"}) end, "no tokenizer")
  t.raises(function() pol:sample({{1}}, {temprature = 1}) end, "unknown option 'temprature'")
  t.raises(function() pol:sample({{1}}, {top_p = 2}) end, "top_p")
  t.raises(function() pol:sample({{1}}, {stop = "x"}) end, "tokenizer")
end)
t.test("a CPU policy gets the default threads unless told", function()
  t.eq(policy.load(qwen, {threads = 2}):info().threads, 2)
  t.eq(policy.load(qwen):info().threads, policy.default_threads())
  -- all cores when libtorch's BLAS shares its pool (MKL), else one beside the BLAS's own
  local d = policy.default_threads()
  t.ok(d == 1 or d == sys.cpu_count(), "default threads " .. d)
end)

t.test("policy.cuda_available says whether cuda can be asked for", function()
  local has = policy.cuda_available()
  t.eq(type(has), "boolean")
  if has then
    t.eq(policy.load(qwen, {device = "cuda"}):info().device, "cuda")
  else
    t.raises(function() policy.load(qwen, {device = "cuda"}) end, "no CUDA device")
  end
end)

t.run()
