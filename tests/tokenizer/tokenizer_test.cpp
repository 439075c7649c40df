// The tokenizer against Hugging Face `tokenizers` on the real Qwen3 data: ids and decoded
// text of a corpus (C, prose, numbers, whitespace, special tokens, CJK, emoji, combining
// marks) and chat prompts, recorded by scripts/device/tokenizer_reference.py.
#include <catch2/catch.hpp>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/tokenizer_impl.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <atomic>
#include <random>
#include <thread>
#include "files/files.hpp"

using tokenizer::Tokenizer;
using Json = nlohmann::json;
namespace fs = std::filesystem;

static const Tokenizer& qwen() {
  static const Tokenizer tok = Tokenizer::load(QWEN3_TOKENIZER_DIR);
  return tok;
}

static Json fixture(const char* name) {
  std::ifstream in(fs::path(TOKENIZER_FIXTURE_DIR) / name);
  REQUIRE(in.good());
  return Json::parse(in);
}

static std::string tmpdir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("tokenizer_test_" + std::to_string(::getpid()) + "_" + name);
  files::remove_tree(std::filesystem::path(d).string());
  fs::create_directories(d);
  return d.string();
}

TEST_CASE("qwen3 encodes the parity corpus to the reference ids", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  REQUIRE(ref["cases"].size() >= 40);
  int i = 0;
  for (const auto& c : ref["cases"]) {
    std::string text = c["text"];
    INFO("case " << i++ << ": " << text.substr(0, 80));
    CHECK(qwen().encode(text) == c["ids"].get<std::vector<int>>());
  }
  std::string whole;
  for (const auto& c : ref["cases"]) whole += c["text"].get<std::string>();
  CHECK(qwen().encode(whole) == ref["whole_ids"].get<std::vector<int>>());
}

TEST_CASE("qwen3 decodes the reference ids to the reference text", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  for (const auto& c : ref["cases"]) {
    auto ids = c["ids"].get<std::vector<int>>();
    INFO(c["text"].get<std::string>().substr(0, 80));
    CHECK(qwen().decode(ids) == c["decoded"].get<std::string>());
    CHECK(qwen().decode(ids, true) == c["decoded_skip_special"].get<std::string>());
  }
}

TEST_CASE("qwen3 chat prompts match the model's template", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  REQUIRE(ref["chat"].size() >= 6);
  for (const auto& c : ref["chat"]) {
    std::vector<tokenizer::ChatMessage> msgs;
    for (const auto& m : c["messages"]) msgs.push_back({m["role"], m["content"]});
    tokenizer::ChatOptions o;
    o.add_generation_prompt = c["add_generation_prompt"];
    if (c.contains("enable_thinking")) o.enable_thinking = c["enable_thinking"].get<bool>();
    CHECK(qwen().chat(msgs, o) == c["text"].get<std::string>());
  }
}

TEST_CASE("qwen3 vocabulary lookups and stop tokens", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  CHECK(qwen().vocab_size() == ref["vocab_size"].get<int>());
  CHECK(qwen().token_to_id("<|im_end|>") == 151645);
  CHECK(qwen().token_to_id("<|endoftext|>") == 151643);
  CHECK(qwen().token_to_id("Ġthe") == 279);
  CHECK_FALSE(qwen().token_to_id("no such token").has_value());
  CHECK(qwen().id_to_token(279) == "Ġthe");
  CHECK(qwen().id_to_token(151644) == "<|im_start|>");
  CHECK(qwen().token_bytes(279) == " the");
  auto stop = qwen().stop_ids();
  CHECK(std::find(stop.begin(), stop.end(), ref["eos_token_id"].get<int>()) != stop.end());
  CHECK_THROWS_WITH(qwen().id_to_token(200000), Catch::Contains("200000"));
  CHECK_THROWS_WITH(qwen().decode({1, -1}), Catch::Contains("-1"));
}

TEST_CASE("stop ids join generation_config and config eos ids", "[tokenizer]") {
  std::string dir = tmpdir("stop_ids");
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    fs::create_symlink(fs::path(QWEN3_TOKENIZER_DIR) / f, fs::path(dir) / f);
  std::ofstream(dir + "/generation_config.json") << R"({"eos_token_id": [151645, 151643], "top_p": 0.8})";
  std::ofstream(dir + "/config.json") << R"({"model_type": "qwen2", "eos_token_id": 151643})";
  CHECK(Tokenizer::load(dir).stop_ids() == std::vector<int>{151643, 151645});
  std::ofstream(dir + "/generation_config.json") << "{broken";
  CHECK_THROWS_WITH(Tokenizer::load(dir), Catch::Contains("generation_config.json: malformed JSON"));
  files::remove_tree(std::filesystem::path(dir).string());
}

TEST_CASE("concurrent encodes share the cache safely", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  Tokenizer tok = Tokenizer::load(QWEN3_TOKENIZER_DIR);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (size_t i = (t + round) % 7; i < ref["cases"].size(); i += 3)
          if (tok.encode(ref["cases"][i]["text"].get<std::string>()) !=
              ref["cases"][i]["ids"].get<std::vector<int>>())
            ++mismatches;
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches == 0);
}

TEST_CASE("decoding gives exact bytes also for ids that split a character", "[tokenizer]") {
  std::string text = "héllo 👍🏽 你好 e\xcc\x81";  // NFC composes the last e + acute
  auto ids = qwen().encode(text);
  std::string joined;
  bool split_char = false;
  for (int id : ids) {
    std::string piece = qwen().decode({id});
    // a lone piece that is not valid UTF-8 means the id ends inside a character
    for (unsigned char ch : piece) split_char |= ch >= 0x80;
    joined += piece;
  }
  CHECK(split_char);
  CHECK(joined == qwen().decode(ids));
  CHECK(joined == "héllo 👍🏽 你好 é");
  // a prefix of the ids ends inside the emoji: the bytes so far, not a replacement char
  std::vector<int> emoji = qwen().encode(" 👍");
  REQUIRE(emoji.size() == 2);
  std::string part = qwen().decode({emoji[0]});
  CHECK(std::string(" 👍").rfind(part, 0) == 0);
  CHECK(part.size() < 5);
}

// Between min_len and max_len pieces drawn from alphabet, joined.
static std::string random_text(std::mt19937& rng, const std::vector<std::string>& alphabet, int min_len,
                               int max_len) {
  std::string s;
  int len = std::uniform_int_distribution<int>(min_len, max_len)(rng);
  for (int k = 0; k < len; ++k)
    s += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
  return s;
}

TEST_CASE("random text round-trips through encode and decode", "[tokenizer]") {
  // NFC-stable characters only, so decode(encode(s)) == s exactly.
  const std::vector<std::string> alphabet = {
      "a", "b", "Z", "0", "7", " ", "  ", "\n", "\t", "\r\n", "'", "'s", "'LL", ".", "{", "}",
      "é", "ß", "Ж", "你", "好", "😀", "👍🏽", "\xe2\x80\x8d", "\u00a0", "\u3000", "<|im_end|>",
      "<|endoftext|>", "<|im_start", "_", "==", "->", "١", "½"};
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string s = random_text(rng, alphabet, 0, 40);
    INFO(s);
    CHECK(qwen().decode(qwen().encode(s)) == s);
  }
}

static std::vector<std::string> pieces(const tokenizer::SplitRegex& re, const std::string& text) {
  std::vector<std::string> out;
  re.split(text, [&](std::string_view p) { out.emplace_back(p); });
  return out;
}

TEST_CASE("the direct Qwen2 splitter cuts text exactly as PCRE2 does", "[tokenizer]") {
  tokenizer::SplitRegex fast(tokenizer::kQwen2Pattern), pcre(tokenizer::kQwen2Pattern, false);
  REQUIRE(fast.fast());
  REQUIRE_FALSE(pcre.fast());
  for (const auto& c : fixture("tokenizer_corpus.json")) {
    std::string text = c;
    CHECK(pieces(fast, text) == pieces(pcre, text));
  }
  // Random text over characters of every class the pattern tells apart.
  const std::vector<std::string> alphabet = {
      "a", "Z", "s", "S", "t", "re", "VE", "m", "ll", "D", "'", "\u017f", "\u212a", "0", "9", "\u0663",
      "\u00bd", "\u2167", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u0085", "\u00a0",
      "\u1680", "\u180e", "\u2009", "\u2028", "\u2029", "\u3000", "\u200b", ".", ",", "{", "}", "-",
      "=", "_", "\"", "\u0301", "\u05d0", "\u4f60", "\u00e9", "\U0001f600", "\U0001f44d\U0001f3fd",
      "\U0001d538", "\x01", "\x7f", "\ufeff", "\ue000", "\U0010ffff"};
  std::mt19937 rng(11);
  for (int round = 0; round < 4000; ++round) {
    std::string s = random_text(rng, alphabet, 1, 24);
    INFO(s);
    REQUIRE(pieces(fast, s) == pieces(pcre, s));
  }
}

TEST_CASE("the word cache does not change ids", "[tokenizer]") {
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  Tokenizer tok = Tokenizer::load(QWEN3_TOKENIZER_DIR);
  tok.set_cache_enabled(false);
  for (const auto& c : ref["cases"])
    CHECK(tok.encode(c["text"].get<std::string>()) == c["ids"].get<std::vector<int>>());
}

TEST_CASE("encode_ordinary keeps special token texts as plain text", "[tokenizer]") {
  std::string text = "a<|im_end|>b";
  auto special = qwen().encode(text);
  CHECK(special == std::vector<int>{64, 151645, 65});
  auto plain = qwen().encode_ordinary(text);
  CHECK(plain.size() > 3);
  CHECK(std::find(plain.begin(), plain.end(), 151645) == plain.end());
  CHECK(qwen().decode(plain) == text);
}

TEST_CASE("invalid UTF-8 input is rejected with its offset", "[tokenizer]") {
  CHECK_THROWS_WITH(qwen().encode("ok\xff"), Catch::Contains("not valid UTF-8 (byte 2)"));
  CHECK_THROWS_WITH(qwen().encode("\xed\xa0\x80"), Catch::Contains("byte 0"));  // a surrogate
  CHECK_THROWS_WITH(qwen().encode("\xc0\xaf"), Catch::Contains("byte 0"));      // overlong
}

TEST_CASE("a saved qwen3 tokenizer loads back identically", "[tokenizer]") {
  std::string dir = tmpdir("qwen_save");
  qwen().save(dir);
  Tokenizer back = Tokenizer::load(dir);
  CHECK(back.vocab_size() == qwen().vocab_size());
  CHECK(back.stop_ids() == qwen().stop_ids());
  const Json ref = fixture("tokenizer_qwen3_ref.json");
  for (const auto& c : ref["cases"])
    CHECK(back.encode(c["text"].get<std::string>()) == c["ids"].get<std::vector<int>>());
  files::remove_tree(std::filesystem::path(dir).string());
}

// ---- errors name the problem -------------------------------------------------------

static std::string write_dir(const std::string& name, const std::string& tokenizer_json,
                             const std::string& config = "") {
  std::string dir = tmpdir(name);
  std::ofstream(dir + "/tokenizer.json") << tokenizer_json;
  if (!config.empty()) std::ofstream(dir + "/tokenizer_config.json") << config;
  return dir;
}


TEST_CASE("load errors name the missing file or the bad field", "[tokenizer]") {
  CHECK_THROWS_WITH(Tokenizer::load("/nonexistent/tok"), Catch::Contains("does not exist"));
  std::string empty = tmpdir("empty");
  CHECK_THROWS_WITH(Tokenizer::load(empty), Catch::Contains("missing") && Catch::Contains("tokenizer.json"));

  CHECK_THROWS_WITH(Tokenizer::from_json("{\"model\": "), Catch::Contains("malformed JSON"));
  CHECK_THROWS_WITH(Tokenizer::from_json("{}"), Catch::Contains("model") && Catch::Contains("missing field"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "WordPiece", "vocab": {}}})"),
                    Catch::Contains("unknown model type 'WordPiece'"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})"),
                    Catch::Contains("no token for byte"));
  CHECK_THROWS_WITH(Tokenizer::from_json(R"({"model": {"type": "BPE", "vocab": [], "merges": []}})"),
                    Catch::Contains("model.vocab"));

  // a real tokenizer.json with one field spoilt at a time
  std::ifstream in(std::string(QWEN3_TOKENIZER_DIR) + "/tokenizer.json");
  Json j = Json::parse(in);
  {
    Json bad = j;
    bad["model"]["merges"][5] = "Ġ";
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()), Catch::Contains("model.merges[5]"));
    bad["model"]["merges"][5] = Json::array({"Ġ", "zzzz-not-a-token"});
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()),
                      Catch::Contains("model.merges[5]") && Catch::Contains("not in the vocabulary"));
  }
  {
    Json bad = j;
    bad["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()), Catch::Contains("pattern"));
    bad = j;
    bad["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "MergedWithNext";
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()), Catch::Contains("MergedWithNext"));
    bad = j;
    bad["normalizer"] = {{"type", "Lowercase"}};
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()), Catch::Contains("normalizer type 'Lowercase'"));
    bad = j;
    bad["added_tokens"][0].erase("content");
    CHECK_THROWS_WITH(Tokenizer::from_json(bad.dump()), Catch::Contains("added_tokens[0].content"));
  }
  CHECK_THROWS_WITH(Tokenizer::from_json(j.dump(), R"({"eos_token": "<|nope|>"})"),
                    Catch::Contains("eos_token") && Catch::Contains("<|nope|>"));
  CHECK_THROWS_WITH(Tokenizer::from_json(j.dump(), "[1,"), Catch::Contains("tokenizer_config.json: malformed JSON"));
  // without a template, ChatML still works from the special tokens
  Tokenizer plain = Tokenizer::from_json(j.dump());
  CHECK(plain.chat({{"user", "hi"}}, {true}) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  CHECK_THROWS_WITH(plain.chat({{"robot", "hi"}}), Catch::Contains("role 'robot'"));
  CHECK_THROWS_WITH(plain.chat({}), Catch::Contains("no messages"));
  CHECK_THROWS_WITH(Tokenizer::from_json(j.dump(), R"({"chat_template": "{{ messages }}"})").chat({{"user", "x"}}),
                    Catch::Contains("unsupported chat template"));
}

TEST_CASE("the Qwen2.5 default system prompt comes from the template", "[tokenizer]") {
  std::ifstream in(std::string(QWEN3_TOKENIZER_DIR) + "/tokenizer.json");
  std::string tj((std::istreambuf_iterator<char>(in)), {});
  // the part of a Qwen2.5 template that inserts the default system turn
  Json cfg = {{"eos_token", "<|im_end|>"},
              {"chat_template",
               "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + "
               "messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou "
               "are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}"}};
  Tokenizer tok = Tokenizer::from_json(tj, cfg.dump());
  CHECK(tok.chat({{"user", "hi"}}, {true}) ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
        "assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(tok.chat({{"system", "S"}, {"user", "hi"}}) ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n");
}
