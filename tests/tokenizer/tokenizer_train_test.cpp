// The BPE trainer: vocabulary size, special tokens, round trips, save/load, and parity of
// a trained tokenizer with Hugging Face `tokenizers` (fixture from the GPU machine).
#include <catch2/catch.hpp>

#include "tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include "files/files.hpp"

using tokenizer::Tokenizer;
using Json = nlohmann::json;
namespace fs = std::filesystem;

static std::vector<std::string> corpus_texts() {
  std::ifstream in(fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_corpus.json");
  REQUIRE(in.good());
  return Json::parse(in).get<std::vector<std::string>>();
}

// The training corpus of the parity fixture: the parity corpus plus this repository's
// tokenizer sources (C++), repeated so that common pairs are frequent.
static std::vector<std::string> training_texts() {
  std::vector<std::string> texts = corpus_texts();
  for (const char* f : {"tokenizer_test.cpp", "tokenizer_train_test.cpp"})
    texts.push_back(tokenizer::read_text_file(fs::path(TOKENIZER_FIXTURE_DIR) / f));
  return texts;
}

static tokenizer::TrainOptions options(int vocab) {
  tokenizer::TrainOptions o;
  o.vocab_size = vocab;
  o.special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  return o;
}

TEST_CASE("training reaches the requested vocabulary size", "[tokenizer][train]") {
  std::vector<std::string> texts = training_texts();
  Tokenizer tok = tokenizer::train_bpe(texts, options(500));
  CHECK(tok.vocab_size() == 500);
  CHECK(tok.token_to_id("<|endoftext|>") == 497);
  CHECK(tok.token_to_id("<|im_end|>") == 499);
  CHECK(tok.stop_ids() == std::vector<int>{499});
  // frequent words end up as single tokens
  CHECK(tok.encode(" CHECK").size() == 1);
  CHECK(tok.encode(" tok").size() == 1);
  // decoding gives the NFC form of the text, as the Qwen3 tokenizer's reference decode
  std::ifstream in(fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_qwen3_ref.json");
  for (const auto& c : Json::parse(in)["cases"])
    CHECK(tok.decode(tok.encode(c["text"])) == c["decoded"].get<std::string>());
}

TEST_CASE("training stops early when pairs get rare", "[tokenizer][train]") {
  auto o = options(5000);
  Tokenizer tok = tokenizer::train_bpe({"abcabc xyz"}, o);
  CHECK(tok.vocab_size() < 5000);
  CHECK(tok.encode("abc").size() == 1);  // "ab"+"c" seen twice
  CHECK(tok.encode(" xyz").size() == 4);  // every pair seen once: no merges
}

TEST_CASE("special tokens are atomic and never learned from", "[tokenizer][train]") {
  std::vector<std::string> texts(20, "<|im_start|>user\nhello<|im_end|>\n");
  Tokenizer tok = tokenizer::train_bpe(texts, options(290));
  auto ids = tok.encode("<|im_start|>user\nhello<|im_end|>");
  CHECK(ids.front() == *tok.token_to_id("<|im_start|>"));
  CHECK(ids.back() == *tok.token_to_id("<|im_end|>"));
  CHECK_FALSE(tok.token_to_id("<|").has_value());
  CHECK(tok.chat({{"user", "hi"}}, {true}) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("a trained tokenizer saves and loads back identically", "[tokenizer][train]") {
  Tokenizer tok = tokenizer::train_bpe(training_texts(), options(600));
  auto dir = fs::temp_directory_path() / ("tokenizer_train_" + std::to_string(::getpid()));
  files::remove_tree(std::filesystem::path(dir).string());
  tok.save(dir);
  CHECK(fs::exists(dir / "tokenizer_config.json"));
  Tokenizer back = Tokenizer::load(dir);
  CHECK(back.vocab_size() == tok.vocab_size());
  CHECK(back.stop_ids() == tok.stop_ids());
  for (const auto& t : corpus_texts()) CHECK(back.encode(t) == tok.encode(t));
  files::remove_tree(std::filesystem::path(dir).string());
}

TEST_CASE("training rejects bad options by name", "[tokenizer][train]") {
  CHECK_THROWS_WITH(tokenizer::train_bpe({"x"}, options(100)), Catch::Contains("vocab_size 100"));
  auto o = options(300);
  o.special_tokens.push_back("<|im_end|>");
  CHECK_THROWS_WITH(tokenizer::train_bpe({"x"}, o), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(tokenizer::train_bpe({"ok", "bad\xff"}, options(300)), Catch::Contains("text 2"));
  o = options(300);
  o.eos_token = "<eos>";
  CHECK_THROWS_WITH(tokenizer::train_bpe({"x"}, o), Catch::Contains("eos_token '<eos>'"));
  CHECK_THROWS_WITH(tokenizer::read_text_file("/nonexistent/corpus.txt"), Catch::Contains("/nonexistent/corpus.txt"));
}

// tokenizer_trained/ was written by train_bpe (the texts and options below) and loaded by
// Hugging Face `tokenizers` and `transformers` on the GPU machine, which recorded
// tokenizer_trained_ref.json. It was trained through the Lua binding at a time when string
// lists were cut at the first NUL byte, so its texts are cut there too.
static std::vector<std::string> fixture_training_texts() {
  std::vector<std::string> texts = corpus_texts();
  for (auto& t : texts) t = t.substr(0, t.find('\0'));
  texts.push_back(tokenizer::read_text_file(fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_train_corpus.txt"));
  return texts;
}

TEST_CASE("training is deterministic and reproduces the parity fixture", "[tokenizer][train]") {
  tokenizer::TrainOptions o;
  o.vocab_size = 1000;
  o.special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  Tokenizer tok = tokenizer::train_bpe(fixture_training_texts(), o);
  auto dir = fs::temp_directory_path() / ("tokenizer_fixture_" + std::to_string(::getpid()));
  files::remove_tree(std::filesystem::path(dir).string());
  tok.save(dir);
  fs::path ref = fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_trained";
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
    INFO(f);
    CHECK(tokenizer::read_text_file(dir / f) == tokenizer::read_text_file(ref / f));
  }
  files::remove_tree(std::filesystem::path(dir).string());
}

TEST_CASE("a trained tokenizer encodes as Hugging Face tokenizers does", "[tokenizer][train]") {
  std::ifstream in(fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_trained_ref.json");
  REQUIRE(in.good());
  const Json ref = Json::parse(in);
  Tokenizer tok = Tokenizer::load(fs::path(TOKENIZER_FIXTURE_DIR) / "tokenizer_trained");
  CHECK(tok.vocab_size() == ref["vocab_size"].get<int>());
  CHECK(tok.stop_ids() == std::vector<int>{ref["eos_token_id"].get<int>()});
  std::string whole;
  for (const auto& c : ref["cases"]) {
    std::string text = c["text"];
    whole += text;
    INFO(text.substr(0, 80));
    auto ids = c["ids"].get<std::vector<int>>();
    CHECK(tok.encode(text) == ids);
    CHECK(tok.decode(ids) == c["decoded"].get<std::string>());
    CHECK(tok.decode(ids, true) == c["decoded_skip_special"].get<std::string>());
  }
  CHECK(tok.encode(whole) == ref["whole_ids"].get<std::vector<int>>());
  for (const auto& c : ref["chat"]) {
    std::vector<tokenizer::ChatMessage> msgs;
    for (const auto& m : c["messages"]) msgs.push_back({m["role"], m["content"]});
    tokenizer::ChatOptions o;
    o.add_generation_prompt = c["add_generation_prompt"];
    CHECK(tok.chat(msgs, o) == c["text"].get<std::string>());
  }
}
