// Generation: greedy parity with transformers, prefix sharing, batching with padding,
// seeds, log-probs, stop tokens, stop strings and finish reasons.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "policy/policy.hpp"
#include "policy/safetensors.hpp"

using namespace policy;
namespace fs = std::filesystem;

static const std::string kQwen = std::string(POLICY_FIXTURES) + "/tiny_qwen2";
static const std::string kLlama = std::string(POLICY_FIXTURES) + "/tiny_llama";

// Test-only codec: token id = byte (the fixtures have a 256-token vocabulary).
struct ByteCodec : TextCodec {
  std::vector<int> encode(const std::string& s) const override {
    return std::vector<int>(s.begin(), s.end());
  }
  std::string decode(const std::vector<int>& ids) const override {
    return std::string(ids.begin(), ids.end());
  }
};

static std::vector<int> ref_ids(const std::string& dir, const std::string& name, int64_t len = -1) {
  SafetensorsFile f(fs::path(dir) / "reference.safetensors");
  auto& v = f.tensors().at(name);
  auto* p = static_cast<const int64_t*>(v.data);
  int64_t n = len < 0 ? v.numel() : len;
  return std::vector<int>(p, p + n);
}

static std::vector<int> ref_prompt(const std::string& dir) {
  SafetensorsFile f(fs::path(dir) / "reference.safetensors");
  int64_t len = std::stoll(f.metadata().at("prompt_len"));
  return ref_ids(dir, "input_ids", len);  // row 0 of input_ids
}

static SampleOptions greedy(int max_tokens) {
  SampleOptions o;
  o.temperature = 0;
  o.max_tokens = max_tokens;
  o.ignore_eos = true;
  return o;
}

// Sampling at the default temperature, reproducible by its seed; max_tokens each, as greedy.
static SampleOptions seeded(int n, int max_tokens, uint64_t seed) {
  SampleOptions o;
  o.n = n;
  o.max_tokens = max_tokens;
  o.ignore_eos = true;
  o.seed = seed;
  return o;
}

TEST_CASE("greedy generation gives transformers' ids") {
  for (auto dir : {kQwen, kLlama}) {
    auto pol = Policy::load(dir);
    auto want = ref_ids(dir, "greedy_fp32");
    auto got = pol->sample({ref_prompt(dir)}, greedy(static_cast<int>(want.size())));
    REQUIRE(got.size() == 1);
    REQUIRE(got[0].size() == 1);
    CHECK(got[0][0].tokens == want);
    CHECK(got[0][0].finish_reason == "length");
    CHECK(got[0][0].logprobs.size() == want.size());
  }
}

TEST_CASE("a group shares its prompt and batched prompts of different lengths agree") {
  auto pol = Policy::load(kQwen);
  auto prompt = ref_prompt(kQwen);
  std::vector<int> shorter(prompt.begin(), prompt.begin() + 3);
  auto alone_long = pol->sample({prompt}, greedy(20))[0][0];
  auto alone_short = pol->sample({shorter}, greedy(20))[0][0];
  auto o = greedy(20);
  o.n = 3;
  auto both = pol->sample({shorter, prompt}, o);
  REQUIRE(both.size() == 2);
  for (int i = 0; i < 3; ++i) {
    CHECK(both[0][i].tokens == alone_short.tokens);
    CHECK(both[1][i].tokens == alone_long.tokens);
    for (size_t t = 0; t < alone_long.logprobs.size(); ++t)
      CHECK(both[1][i].logprobs[t] == Approx(alone_long.logprobs[t]).margin(1e-4));
  }
}

TEST_CASE("sampling log-probs equal the scored log-probs of the same completion") {
  auto pol = Policy::load(kLlama);
  auto o = seeded(4, 12, 7);
  o.temperature = 1.0;
  auto prompt = ref_prompt(kLlama);
  auto group = pol->sample({prompt}, o)[0];
  for (auto& c : group) {
    auto lp = pol->logprobs(prompt, c.tokens);
    REQUIRE(lp.size() == c.tokens.size());
    for (size_t t = 0; t < lp.size(); ++t) CHECK(c.logprobs[t] == Approx(lp[t]).margin(1e-4));
  }
  // At temperature 0.5 the policy's log-probs are those of logits / 0.5.
  o.temperature = 0.5;
  auto c = pol->sample({prompt}, o)[0][0];
  auto lp = pol->logprobs(prompt, c.tokens, 0.5);
  for (size_t t = 0; t < lp.size(); ++t) CHECK(c.logprobs[t] == Approx(lp[t]).margin(1e-4));
}

TEST_CASE("the same seed gives the same samples and another seed others") {
  auto pol = Policy::load(kQwen);
  auto o = seeded(4, 16, 123);
  auto prompt = ref_prompt(kQwen);
  auto a = pol->sample({prompt}, o)[0];
  auto b = pol->sample({prompt}, o)[0];
  o.seed = 124;
  auto c = pol->sample({prompt}, o)[0];
  bool differs = false;
  for (int i = 0; i < 4; ++i) {
    CHECK(a[i].tokens == b[i].tokens);
    differs = differs || a[i].tokens != c[i].tokens;
  }
  CHECK(differs);
  bool within_group = false;
  for (int i = 1; i < 4; ++i) within_group = within_group || a[i].tokens != a[0].tokens;
  CHECK(within_group);
}

TEST_CASE("top_k 1 is greedy and top_p keeps only the nucleus") {
  auto pol = Policy::load(kQwen);
  auto prompt = ref_prompt(kQwen);
  auto g = pol->sample({prompt}, greedy(16))[0][0];
  auto o = seeded(1, 16, 1);
  o.top_k = 1;
  auto k1 = pol->sample({prompt}, o)[0][0];
  CHECK(k1.tokens == g.tokens);
  for (float lp : k1.logprobs) CHECK(lp == Approx(0.0).margin(1e-6));  // one token kept
  o.top_k = 0;
  o.top_p = 1e-6;  // the nucleus is the single most likely token
  auto p0 = pol->sample({prompt}, o)[0][0];
  CHECK(p0.tokens == g.tokens);
  o.top_p = 0.9;
  o.n = 8;
  auto nucleus = pol->sample({prompt}, o);
  for (auto& c : nucleus[0])
    for (float lp : c.logprobs) CHECK(lp <= 0.0f);
}

TEST_CASE("a stop token ends a completion early and finished rows leave the batch") {
  auto pol = Policy::load(kQwen);
  auto prompt = ref_prompt(kQwen);
  auto g = pol->sample({prompt}, greedy(16))[0][0];
  // Stop on the greedy run's 5th token: every row stops there, with reason "stop".
  auto o = greedy(16);
  o.n = 2;
  o.stop_tokens = std::vector<int>{g.tokens[4]};
  size_t first = 0;
  while (g.tokens[first] != g.tokens[4]) ++first;
  auto res = pol->sample({prompt, {prompt[0]}}, o);
  for (auto& c : res[0]) {
    CHECK(c.finish_reason == "stop");
    CHECK(c.tokens == std::vector<int>(g.tokens.begin(), g.tokens.begin() + first + 1));
  }
  // The other prompt's rows go on after the first prompt's rows have finished.
  auto other = pol->sample({{prompt[0]}}, o)[0][0];
  CHECK(res[1][0].tokens == other.tokens);
  CHECK(res[1][1].tokens == other.tokens);
}

TEST_CASE("stop strings cut the text and the context limit ends with length") {
  auto pol = Policy::load(kQwen);
  pol->set_codec(std::make_shared<ByteCodec>());
  auto prompt = ref_prompt(kQwen);
  auto g = pol->sample({prompt}, greedy(24))[0][0];
  CHECK(g.text == std::string(g.tokens.begin(), g.tokens.end()));
  std::string stop(g.tokens.begin() + 6, g.tokens.begin() + 8);  // two bytes of the run
  auto o = greedy(24);
  o.stop = {stop};
  auto c = pol->sample({prompt}, o)[0][0];
  CHECK(c.finish_reason == "stop");
  size_t at = g.text.find(stop);
  CHECK(c.text == g.text.substr(0, at));
  CHECK(c.tokens.size() == at + stop.size());
  // max_position_embeddings is 128: a long request ends at the context's end.
  auto l = pol->sample({prompt}, greedy(500))[0][0];
  CHECK(l.finish_reason == "length");
  CHECK(prompt.size() + l.tokens.size() == 128);
}

TEST_CASE("bad sample requests are errors") {
  auto pol = Policy::load(kQwen);
  SampleOptions o;
  CHECK_THROWS_WITH(pol->sample({{}}, o), Catch::Contains("empty"));
  CHECK_THROWS_WITH(pol->sample({{1, 999}}, o), Catch::Contains("999"));
  o.top_p = 0;
  CHECK_THROWS_WITH(pol->sample({{1}}, o), Catch::Contains("top_p"));
  o = {};
  o.stop = {"x"};
  CHECK_THROWS_WITH(pol->sample({{1}}, o), Catch::Contains("tokenizer"));
  CHECK_THROWS_WITH(pol->logprobs({}, {1}), Catch::Contains("prompt"));
}
