// engine.policy: load a Hugging Face checkpoint and sample from it.
//
//   local pol = policy.load("models/qwen", {device = "cuda", dtype = "bf16"})
//   local groups = pol:sample({"prompt one", "prompt two"}, {n = 8, temperature = 1.0,
//                             top_p = 0.95, max_tokens = 512, stop = {"```\n"}, seed = 1})
//   groups[1][3].text, groups[1][3].finish_reason
//   groups[1][3].tokens, groups[1][3].logprobs -- tables made when asked
//   pol:logprobs(prompt, completion)   -- per-token log-probs of completion after prompt
//   policy.cuda_available()            -- true when libtorch sees a CUDA device
//   policy.default_threads()           -- the CPU threads policy.load gives libtorch
//
// A completion is a handle (engine.policy.Completion): its ids and log-probs stay in C++
// and go to trainer:step as they are, with the ids of the prompt it answered.
//
// A prompt is a string (encoded by the checkpoint's tokenizer) or a list of token ids.
// Without a tokenizer the policy works on ids only and completions carry no text.
#include "host/bind.hpp"
#include "host/mod_policy.hpp"
#include "policy/policy.hpp"
#include "parallel/trainer_ranks/replica.hpp"

namespace host {

template <>
const char* Class<policy::Policy>::name = "engine.policy.Policy";
template <>
const char* Class<SampledCompletion>::name = "engine.policy.Completion";

const SampledCompletion* test_completion(lua_State* L, int idx) { return test_object<SampledCompletion>(L, idx); }

static policy::Policy& self(lua_State* L, const char* where) {
  return check_object<policy::Policy>(L, 1, where);
}

std::vector<int> check_ids(lua_State* L, int idx, const char* where, const std::string& what) {
  idx = lua_absindex(L, idx);
  check_table(L, idx, where, what.c_str());
  std::vector<int> out;
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, idx, i);
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum || v < INT32_MIN || v > INT32_MAX)
      throw Error(std::string(where) + ": " + what + "[" + std::to_string(i) + "] must be a token id");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

// A string (encoded), a list of token ids, or a completion (its ids).
std::vector<int> check_text_or_ids(lua_State* L, int idx, policy::Policy& pol,
                                          const char* where, const std::string& what) {
  if (const auto* c = test_completion(L, idx)) return c->completion.tokens;
  if (lua_type(L, idx) == LUA_TSTRING) {
    if (!pol.codec())
      throw Error(std::string(where) + ": " + what + " is text but no tokenizer is loaded; "
                  "pass token ids");
    size_t len = 0;
    const char* s = lua_tolstring(L, idx, &len);
    return pol.codec()->encode(std::string(s, len));
  }
  if (lua_type(L, idx) == LUA_TTABLE) return check_ids(L, idx, where, what);
  throw Error(std::string(where) + ": " + what + " must be a string, a list of token ids or a completion, got " +
              luaL_typename(L, idx));
}

static void push_ints(lua_State* L, const std::vector<int>& v) {
  lua_createtable(L, static_cast<int>(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

static void push_floats(lua_State* L, const std::vector<float>& v) {
  lua_createtable(L, static_cast<int>(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

static int policy_load(lua_State* L) {
  std::string dir = check_string(L, 1, "policy.load", "directory");
  policy::LoadOptions lo;
  Options o(L, 2, "policy.load");
  o.get("device", lo.device);
  o.get("dtype", lo.dtype, {"fp32", "bf16", "fp16"});
  o.get("threads", lo.threads);
  std::optional<int64_t> random_weights;
  o.get("random_weights", random_weights);
  o.done();
  if (random_weights) {
    if (*random_weights < 0) throw Error("policy.load: option 'random_weights' must be a seed >= 0");
    lo.random_weights = *random_weights;
  }
  push_object(L, replica::load_policy(dir, lo));
  return 1;
}

static int pol_sample(lua_State* L) {
  auto& pol = self(L, "pol:sample");
  check_table(L, 2, "pol:sample", "prompts");
  std::vector<std::vector<int>> prompts;
  lua_Integer np = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= np; ++i) {
    lua_geti(L, 2, i);
    prompts.push_back(check_text_or_ids(L, -1, pol, "pol:sample", "prompts[" + std::to_string(i) + "]"));
    lua_pop(L, 1);
  }
  policy::SampleOptions so;
  std::optional<int64_t> seed;
  Options o(L, 3, "pol:sample");
  o.get("n", so.n);
  o.get("temperature", so.temperature);
  o.get("top_p", so.top_p);
  o.get("top_k", so.top_k);
  o.get("max_tokens", so.max_tokens);
  o.get("ignore_eos", so.ignore_eos);
  o.get("seed", seed);
  o.push("stop");
  if (lua_type(L, -1) == LUA_TSTRING) so.stop = {lua_tostring(L, -1)};
  else if (!lua_isnil(L, -1)) so.stop = check_string_list(L, -1, "pol:sample", "stop");
  lua_pop(L, 1);
  o.push("stop_tokens");
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1)) throw Error("pol:sample: option 'stop_tokens' must be a list of token ids");
    so.stop_tokens = check_ids(L, -1, "pol:sample", "stop_tokens");
  }
  lua_pop(L, 1);
  o.done();
  if (seed) so.seed = static_cast<uint64_t>(*seed);
  auto groups = replica::sample(pol, prompts, so);
  lua_createtable(L, static_cast<int>(groups.size()), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    auto prompt = std::make_shared<const std::vector<int>>(std::move(prompts[g]));
    lua_createtable(L, static_cast<int>(groups[g].size()), 0);
    for (size_t i = 0; i < groups[g].size(); ++i) {
      push_object(L, std::make_shared<SampledCompletion>(
                         SampledCompletion{std::move(groups[g][i]), prompt, pol.codec() != nullptr}));
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(g + 1));
  }
  return 1;
}

// c.text (nil without a tokenizer), c.finish_reason; c.tokens and c.logprobs as new tables.
static int completion_index(lua_State* L) {
  const auto& s = check_object<SampledCompletion>(L, 1, "completion");
  const auto& c = s.completion;
  const std::string key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (key == "text" && s.has_text) lua_pushlstring(L, c.text.data(), c.text.size());
  else if (key == "finish_reason") lua_pushstring(L, c.finish_reason.c_str());
  else if (key == "tokens") push_ints(L, c.tokens);
  else if (key == "logprobs") push_floats(L, c.logprobs);
  else lua_pushnil(L);
  return 1;
}

static int completion_tostring(lua_State* L) {
  if (auto* s = test_completion(L, 1))
    lua_pushfstring(L, "engine.policy.Completion(%d tokens, %s)", static_cast<int>(s->completion.tokens.size()),
                    s->completion.finish_reason.c_str());
  else lua_pushliteral(L, "engine.policy.Completion(closed)");
  return 1;
}

// pol:logprobs(prompt, completion, {temperature = 1}): text is encoded piecewise, so pass
// the sampled token ids to score exactly what was generated.
static int pol_logprobs(lua_State* L) {
  auto& pol = self(L, "pol:logprobs");
  auto prompt = check_text_or_ids(L, 2, pol, "pol:logprobs", "prompt");
  auto completion = check_text_or_ids(L, 3, pol, "pol:logprobs", "completion");
  double temperature = 1.0;
  Options o(L, 4, "pol:logprobs");
  o.get("temperature", temperature);
  o.done();
  push_floats(L, pol.logprobs(prompt, completion, temperature));
  return 1;
}

static int pol_info(lua_State* L) {
  auto& pol = self(L, "pol:info");
  const auto& c = pol.config();
  lua_createtable(L, 0, 16);
  auto set_int = [&](const char* k, int64_t v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
  };
  lua_pushstring(L, c.model_type.c_str());
  lua_setfield(L, -2, "model_type");
  set_int("vocab_size", c.vocab_size);
  set_int("output_vocab", pol.output_vocab());
  set_int("hidden_size", c.hidden_size);
  set_int("intermediate_size", c.intermediate_size);
  set_int("layers", c.num_layers);
  set_int("heads", c.num_heads);
  set_int("kv_heads", c.num_kv_heads);
  set_int("head_dim", c.head_dim);
  set_int("max_position", c.max_position);
  set_int("parameter_bytes", pol.parameter_bytes());
  lua_pushboolean(L, c.tie_embeddings);
  lua_setfield(L, -2, "tie_embeddings");
  lua_pushstring(L, pol.device().c_str());
  lua_setfield(L, -2, "device");
  lua_pushstring(L, pol.dtype().c_str());
  lua_setfield(L, -2, "dtype");
  lua_pushboolean(L, pol.codec() != nullptr);
  lua_setfield(L, -2, "has_tokenizer");
  set_int("threads", policy::intra_op_threads());
  push_ints(L, std::vector<int>(c.eos_token_ids.begin(), c.eos_token_ids.end()));
  lua_setfield(L, -2, "eos_token_ids");
  return 1;
}

static int pol_tostring(lua_State* L) {
  auto& pol = self(L, "tostring");
  const auto& c = pol.config();
  lua_pushfstring(L, "engine.policy.Policy(%s, %d layers, %s, %s)", c.model_type.c_str(),
                  static_cast<int>(c.num_layers), pol.device().c_str(), pol.dtype().c_str());
  return 1;
}

static int policy_cuda_available(lua_State* L) {
  lua_pushboolean(L, policy::cuda_available());
  return 1;
}

// policy.default_threads(): the CPU threads policy.load gives libtorch unless told.
static int policy_default_threads(lua_State* L) {
  lua_pushinteger(L, policy::default_threads());
  return 1;
}

int open_policy(lua_State* L) {
  define_class<SampledCompletion>(L, {}, {HOST_FN("__index", completion_index),
                                          HOST_FN("__tostring", completion_tostring)});
  define_class<policy::Policy>(L,
                               {HOST_FN("sample", pol_sample), HOST_FN("logprobs", pol_logprobs),
                                HOST_FN("info", pol_info)},
                               {HOST_FN("__tostring", pol_tostring)});
  lua_newtable(L);
  set_functions(L, {HOST_FN("load", policy_load),
                    HOST_FN("cuda_available", policy_cuda_available),
                    HOST_FN("default_threads", policy_default_threads)});
  return 1;
}

}  // namespace host
