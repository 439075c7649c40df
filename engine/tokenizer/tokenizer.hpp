// Byte-level BPE tokenizer compatible with Hugging Face `tokenizer.json` (GPT-2 / Qwen2 /
// Llama-3 style): added and special tokens are cut out first, the rest is NFC-normalised
// (when the file asks for it), split by the pre-tokenizer's regex (PCRE2, UTF + UCP),
// mapped byte -> unicode and merged by rank. Decoding returns the exact bytes, also for
// id sequences that end inside a UTF-8 character.
//
// Also: the ChatML chat template of Qwen models, the stop tokens, and a BPE trainer that
// writes a tokenizer.json + tokenizer_config.json loadable by Hugging Face `tokenizers`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tokenizer {

struct AddedToken {
  int id = -1;
  std::string content;
  bool special = false;      // dropped by decode(..., skip_special = true)
  bool lstrip = false;       // absorbs whitespace to its left
  bool rstrip = false;       // absorbs whitespace to its right
  bool single_word = false;  // only matches when not inside a word
  bool normalized = false;   // matched on the normalised text instead of the raw text
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
};

struct ChatOptions {
  bool add_generation_prompt = false;
  // Templates with a thinking block (Qwen3): false appends an empty one after the
  // generation prompt, as `enable_thinking=False` does in `transformers`.
  std::optional<bool> enable_thinking;
};

struct TrainOptions {
  int vocab_size = 0;                       // including the 256 bytes and the special tokens
  std::vector<std::string> special_tokens;  // get the ids after the learned vocabulary
  int64_t min_frequency = 2;                // pairs seen fewer times are never merged
  std::string eos_token;                    // default: "<|im_end|>" if special, else the first
  // The pre-tokenizer's split regex; merges never cross its pieces. Empty: Qwen2's, which
  // splits code at every punctuation run. A coarser one (whole lines) gives code models
  // shorter sequences.
  std::string pattern;
};

class Tokenizer {
 public:
  struct Impl;

  // `path` is a directory holding tokenizer.json (and optionally tokenizer_config.json,
  // generation_config.json, config.json for the chat template and stop tokens), or the
  // tokenizer.json file itself.
  static Tokenizer load(const std::filesystem::path& path);
  // From the texts of tokenizer.json and tokenizer_config.json ("" when absent).
  static Tokenizer from_json(const std::string& tokenizer_json,
                             const std::string& tokenizer_config_json = "");

  // Added/special tokens in the text become their ids; input must be valid UTF-8.
  std::vector<int> encode(const std::string& text) const;
  // As encode, but added/special token texts are plain text (e.g. "<|im_end|>" written by
  // a user or a model becomes ordinary tokens and cannot end a turn).
  std::vector<int> encode_ordinary(const std::string& text) const;
  // Exact bytes; with skip_special, tokens marked special produce nothing.
  std::string decode(const std::vector<int>& ids, bool skip_special = false) const;
  // The bytes of one token (the added token's text for added tokens).
  const std::string& token_bytes(int id) const;

  // The prompt text of a conversation under the model's ChatML template.
  std::string chat(const std::vector<ChatMessage>& messages, const ChatOptions& opts = {}) const;

  // One past the largest id (vocabulary and added tokens).
  int vocab_size() const;
  // Token strings as tokenizer.json writes them (byte-level alphabet, e.g. "Ġthe").
  std::optional<int> token_to_id(const std::string& token) const;
  std::string id_to_token(int id) const;
  const std::vector<AddedToken>& added_tokens() const;
  // End-of-sequence ids: tokenizer_config's eos_token plus eos_token_id of
  // generation_config.json / config.json when the directory has them; sorted, unique.
  std::vector<int> stop_ids() const;

  // Writes tokenizer.json and tokenizer_config.json into dir (created if needed).
  void save(const std::filesystem::path& dir) const;

  // Encoding caches the ids of each pre-token word; this clears it (benchmarks).
  void clear_cache() const;
  void set_cache_enabled(bool on) const;

  explicit Tokenizer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  const Impl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<Impl> impl_;
};

// Learns a byte-level BPE vocabulary from texts with the Qwen2 pre-tokenizer pattern and
// NFC normalisation; special tokens in the texts are never split or learned from.
Tokenizer train_bpe(const std::vector<std::string>& texts, const TrainOptions& opts);

// Reads whole files (for train_bpe over files); throws naming a missing file.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace tokenizer
