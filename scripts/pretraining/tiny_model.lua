-- A tiny random Qwen2 checkpoint with a byte-level BPE tokenizer trained for it: what the
-- end-to-end tests run the real primitives with, and the starting point of a model
-- pretrained from scratch.
--
--   local tiny_model = require "tiny_model"
--   tiny_model.write("models/tiny", {vocab_size = 384, hidden = 32, layers = 2, seed = 1,
--                                    texts = {...}})   -- texts train the tokenizer
--
-- The weights are drawn N(0, 0.02) as transformers initialises them (norms 1, biases 0),
-- written as float32 safetensors; the tokenizer is trained on `texts` with the ChatML
-- special tokens, and its <|im_end|> is the model's end of sequence.

local tiny_model = {}

local SPECIAL = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}

-- A standard normal draw (Box-Muller), from Lua's seeded generator.
local function normal()
  local u1, u2 = math.random(), math.random()
  if u1 < 1e-300 then u1 = 1e-300 end
  return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end

local function tensor(shape, fill)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local parts = {}
  for i = 1, n do parts[i] = string.pack("<f", fill()) end
  return {shape = shape, data = table.concat(parts)}
end

local function random(shape, std) return tensor(shape, function() return std * normal() end) end
local function constant(shape, v) return tensor(shape, function() return v end) end

-- Writes named float32 tensors as one .safetensors file.
local function write_safetensors(path, tensors)
  local names = {}
  for name in pairs(tensors) do names[#names + 1] = name end
  table.sort(names)
  local header, offset = {__metadata__ = {format = "pt"}}, 0
  for _, name in ipairs(names) do
    local t = tensors[name]
    header[name] = {dtype = "F32", shape = t.shape, data_offsets = {offset, offset + #t.data}}
    offset = offset + #t.data
  end
  local text = json.encode(header)
  text = text .. string.rep(" ", (8 - #text % 8) % 8)  -- the data starts 8-byte aligned
  local f = assert(io.open(path, "wb"))
  f:write(string.pack("<I8", #text), text)
  for _, name in ipairs(names) do f:write(tensors[name].data) end
  f:close()
end

-- opts: vocab_size (>= 256 + specials), hidden, intermediate, layers, heads, kv_heads,
-- max_position, seed, texts (the tokenizer's training corpus), pattern (the tokenizer's
-- split regex; default Qwen2's).
function tiny_model.write(dir, opts)
  opts = opts or {}
  local V = opts.vocab_size or 384
  local H, L = opts.hidden or 32, opts.layers or 2
  local heads, kv = opts.heads or 4, opts.kv_heads or 2
  local I = opts.intermediate or 4 * H
  assert(H % heads == 0 and heads % kv == 0, "tiny_model: hidden % heads and heads % kv_heads must be 0")
  local hd = H // heads
  sys.mkdir(dir)

  local tok = tokenizer.train(opts.texts or {"void matmul_optimized(double *A) { return; }"},
                              {vocab_size = V, special_tokens = SPECIAL, pattern = opts.pattern})
  tok:save(dir)
  local eos = assert(tok:token_to_id("<|im_end|>"))

  math.randomseed(opts.seed or 1)
  local std = 0.02
  local w = {["model.embed_tokens.weight"] = random({V, H}, std),
             ["model.norm.weight"] = constant({H}, 1)}
  for l = 0, L - 1 do
    local p = "model.layers." .. l .. "."
    w[p .. "input_layernorm.weight"] = constant({H}, 1)
    w[p .. "post_attention_layernorm.weight"] = constant({H}, 1)
    w[p .. "self_attn.q_proj.weight"] = random({heads * hd, H}, std)
    w[p .. "self_attn.q_proj.bias"] = constant({heads * hd}, 0)
    w[p .. "self_attn.k_proj.weight"] = random({kv * hd, H}, std)
    w[p .. "self_attn.k_proj.bias"] = constant({kv * hd}, 0)
    w[p .. "self_attn.v_proj.weight"] = random({kv * hd, H}, std)
    w[p .. "self_attn.v_proj.bias"] = constant({kv * hd}, 0)
    w[p .. "self_attn.o_proj.weight"] = random({H, heads * hd}, std)
    w[p .. "mlp.gate_proj.weight"] = random({I, H}, std)
    w[p .. "mlp.up_proj.weight"] = random({I, H}, std)
    w[p .. "mlp.down_proj.weight"] = random({H, I}, std)
  end
  write_safetensors(dir .. "/model.safetensors", w)
  json.write(dir .. "/config.json", {
    architectures = {"Qwen2ForCausalLM"}, model_type = "qwen2", vocab_size = V,
    hidden_size = H, intermediate_size = I, num_hidden_layers = L,
    num_attention_heads = heads, num_key_value_heads = kv,
    max_position_embeddings = opts.max_position or 8192, rope_theta = 10000.0,
    rms_norm_eps = 1e-6, tie_word_embeddings = true, eos_token_id = eos,
    torch_dtype = "float32", hidden_act = "silu",
  })
  return dir
end

return tiny_model
