// Internals shared by the tokenizer's sources (loading/encoding, chat template, trainer).
#pragma once

#include "tokenizer/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <cctype>
#include <memory>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tokenizer {

struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// GPT-2's reversible byte <-> printable-codepoint table used by byte-level BPE.
struct ByteLevelTable {
  std::array<uint32_t, 256> to_cp{};
  std::array<std::string, 256> to_utf8;  // the codepoint of each byte as UTF-8
  std::unordered_map<uint32_t, uint8_t> from_cp;
  ByteLevelTable();
};
const ByteLevelTable& byte_level();

// "Ġthe" -> " the"; throws if a character is outside the byte-level alphabet.
std::string byte_level_decode(std::string_view token);
std::string byte_level_encode(std::string_view bytes);

// Byte offset of the first invalid UTF-8 sequence, or npos.
size_t find_invalid_utf8(std::string_view s);
// NFC of valid UTF-8 (ICU); returns false and leaves out untouched when already NFC.
bool nfc_normalize(std::string_view in, std::string& out);

// Open-addressing map (left id, right id) -> (rank, merged id).
class MergeTable {
 public:
  struct Value {
    int rank;
    int id;
  };
  void build(const std::vector<std::array<int, 3>>& merges);  // {left, right, merged}
  const Value* find(int a, int b) const {
    if (keys_.empty()) return nullptr;
    uint64_t key = (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
    size_t i = hash(key);
    while (true) {
      uint64_t k = keys_[i];
      if (k == key) return &values_[i];
      if (k == kEmpty) return nullptr;
      i = (i + 1) & mask_;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  size_t hash(uint64_t k) const { return size_t((k * 0x9E3779B97F4A7C15ull) >> shift_); }
  std::vector<uint64_t> keys_;
  std::vector<Value> values_;
  size_t mask_ = 0;
  int shift_ = 64;
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

// The compiled pre-tokenizer pattern (PCRE2, UTF + UCP, JIT when available).
// The Qwen2 / Qwen2.5 / Qwen3 split pattern (also what the trainer writes).
extern const char* const kQwen2Pattern;

// A hand-written matcher for kQwen2Pattern: the same pieces as PCRE2 (its character
// classes are read off PCRE2 itself), at several times the speed. Every position starts a
// match of that pattern, so there are no gaps.
class Qwen2Splitter {
 public:
  // The end of the match that starts at text[i] (i < text.size(), valid UTF-8).
  static size_t match_end(std::string_view text, size_t i);
  // Builds the class table (about 0.2 s, once per process) ahead of the first match.
  static void prepare();
};

class SplitRegex {
 public:
  // fast: use Qwen2Splitter when the pattern is kQwen2Pattern (tests turn it off to
  // compare both).
  explicit SplitRegex(const std::string& pattern, bool fast = true);
  bool fast() const { return fast_; }
  ~SplitRegex();
  SplitRegex(const SplitRegex&) = delete;
  SplitRegex& operator=(const SplitRegex&) = delete;
  // Calls fn(piece) for every match and every gap between matches ("Isolated").
  template <class F>
  void split(std::string_view text, F&& fn) const;
  const std::string& pattern() const { return pattern_; }

 private:
  // Finds the next match at or after `from`; returns false when there is none.
  bool next(std::string_view text, size_t from, size_t& begin, size_t& end) const;
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
  bool fast_ = false;
};

template <class F>
void SplitRegex::split(std::string_view text, F&& fn) const {
  if (fast_) {
    for (size_t i = 0; i < text.size();) {
      size_t e = Qwen2Splitter::match_end(text, i);
      fn(text.substr(i, e - i));
      i = e;
    }
    return;
  }
  size_t gap = 0, from = 0, b, e;
  while (from < text.size() && next(text, from, b, e)) {
    if (e == b) {  // an empty match splits nothing: search again one character on
      from = b + 1;
      while (from < text.size() && (uint8_t(text[from]) & 0xC0) == 0x80) ++from;
      continue;
    }
    if (b > gap) fn(text.substr(gap, b - gap));
    fn(text.substr(b, e - b));
    gap = from = e;
  }
  if (gap < text.size()) fn(text.substr(gap));
}

struct Tokenizer::Impl {
  // model
  StringIdMap vocab;                     // token string (byte-level alphabet) -> id
  std::vector<std::string> id_token;     // id -> token string ("" for holes)
  std::vector<std::string> id_bytes;     // id -> decoded bytes
  std::vector<uint8_t> id_special;       // 1 for added tokens marked special
  std::vector<uint8_t> id_present;       // 1 for ids that exist
  std::vector<std::array<int, 3>> merges;  // rank order: {left, right, merged}
  MergeTable merge_table;
  std::array<int, 256> byte_id{};
  bool ignore_merges = false;

  // added tokens, matched leftmost-longest before normalisation/pre-tokenisation
  std::vector<AddedToken> added;
  std::array<std::vector<int>, 256> added_by_first_byte;  // indices into `added`, longest first
  bool any_normalized_added = false;

  // normaliser and pre-tokeniser
  bool nfc = false;
  bool add_prefix_space = false;
  std::unique_ptr<SplitRegex> split;

  // tokenizer_config.json and friends
  nlohmann::json config = nlohmann::json::object();
  std::string chat_template;
  std::vector<int> stop_ids;

  // Per-word cache, one per thread (no locks on the hot path); a thread's cache belongs to
  // the tokenizer whose cache_serial it holds, so switching tokenizers or clear_cache()
  // (a new serial) empties it.
  mutable std::atomic<uint64_t> cache_serial{next_cache_serial()};
  mutable std::atomic<bool> cache_enabled{true};
  static uint64_t next_cache_serial();
  static constexpr size_t kCacheMaxEntries = 1 << 18;
  static constexpr size_t kCacheMaxWordBytes = 256;

  int size() const { return int(id_token.size()); }
  void check_id(int id) const;
  std::optional<int> find_token(std::string_view token) const;
  // BPE of one pre-token (raw bytes), appended to out.
  void bpe(std::string_view piece, std::vector<int>& out) const;
  void bpe_word(std::string_view piece, std::vector<int>& out) const;  // no cache
  // Splits text at added tokens; calls on_added(index into added) and on_text(segment).
  template <class A, class T>
  void split_added(std::string_view text, bool normalized_pass, A&& on_added, T&& on_text) const;
  // Walks text: on_added(index into added) for added tokens, on_piece(bytes) for each
  // pre-token of the normalised text between them.
  // With special = false, added tokens are not recognised: their text is encoded as text.
  template <class A, class P>
  void walk(std::string_view text, A&& on_added, P&& on_piece, bool special = true) const;
};

inline bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

template <class A, class T>
void Tokenizer::Impl::split_added(std::string_view text, bool normalized_pass, A&& on_added,
                                  T&& on_text) const {
  size_t start = 0, i = 0;
  const size_t n = text.size();
  while (i < n) {
    const auto& cands = added_by_first_byte[uint8_t(text[i])];
    int hit = -1;
    for (int c : cands) {  // longest first
      const AddedToken& t = added[c];
      if (t.normalized != normalized_pass) continue;
      if (text.compare(i, t.content.size(), t.content) != 0) continue;
      if (t.single_word) {
        auto word = [](unsigned char ch) { return ch >= 0x80 || std::isalnum(ch) || ch == '_'; };
        if (i > 0 && word(uint8_t(text[i - 1]))) continue;
        size_t e = i + t.content.size();
        if (e < n && word(uint8_t(text[e]))) continue;
      }
      hit = c;
      break;
    }
    if (hit < 0) {
      ++i;
      continue;
    }
    const AddedToken& t = added[hit];
    size_t b = i, e = i + t.content.size();
    if (t.lstrip)
      while (b > start && is_ascii_space(text[b - 1])) --b;
    if (t.rstrip)
      while (e < n && is_ascii_space(text[e])) ++e;
    if (b > start) on_text(text.substr(start, b - start));
    on_added(hit);
    start = i = e;
  }
  if (start < n) on_text(text.substr(start));
}

template <class A, class P>
void Tokenizer::Impl::walk(std::string_view text, A&& on_added, P&& on_piece, bool special) const {
  auto pretok = [&](std::string_view seg) {
    std::string prefixed;
    if (add_prefix_space && seg[0] != ' ') {
      prefixed.reserve(seg.size() + 1);
      prefixed.push_back(' ');
      prefixed.append(seg);
      seg = prefixed;
    }
    if (split) split->split(seg, on_piece);
    else on_piece(seg);
  };
  auto segment = [&](std::string_view seg) {
    std::string normalized;
    if (nfc && nfc_normalize(seg, normalized)) seg = normalized;
    if (seg.empty()) return;
    if (special && any_normalized_added) split_added(seg, true, on_added, pretok);
    else pretok(seg);
  };
  if (special) split_added(text, false, on_added, segment);
  else if (!text.empty()) segment(text);
}

}  // namespace tokenizer
