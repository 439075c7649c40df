// Byte-level BPE training: count the pre-token words of a corpus, then merge the most
// frequent adjacent pair again and again, updating only the words that hold it.
#include "tokenizer/tokenizer_impl.hpp"

#include <algorithm>
#include <optional>
#include <queue>
#include <unordered_set>

namespace tokenizer {

using OJson = nlohmann::ordered_json;

static const char* kChatMlTemplate =
    R"({% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})";

namespace {

OJson byte_level_step() {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false},
          {"use_regex", false}};
}

// tokenizer.json for a vocabulary (token strings in id order), merges and special tokens.
OJson tokenizer_json(const std::vector<std::string>& tokens,
                     const std::vector<std::pair<int, int>>& merges,
                     const std::vector<std::string>& specials, const std::string& pattern) {
  OJson vocab = OJson::object();
  for (size_t i = 0; i < tokens.size(); ++i) vocab[tokens[i]] = int(i);
  OJson m = OJson::array();
  for (auto [a, b] : merges) m.push_back({tokens[a], tokens[b]});
  OJson added = OJson::array();
  for (size_t i = 0; i < specials.size(); ++i)
    added.push_back({{"id", int(tokens.size() + i)}, {"content", specials[i]}, {"single_word", false},
                     {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"},
           {"invert", false}},
          byte_level_step()}}}},
      {"post_processor", byte_level_step()},
      {"decoder", byte_level_step()},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
        {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
        {"byte_fallback", false}, {"ignore_merges", false}, {"vocab", vocab}, {"merges", m}}},
  };
}

OJson config_json(size_t first_special_id, const std::vector<std::string>& specials,
                  const std::string& eos) {
  OJson decoder = OJson::object();
  bool chatml = false, has_eot = false;
  for (size_t i = 0; i < specials.size(); ++i) {
    decoder[std::to_string(first_special_id + i)] = {
        {"content", specials[i]}, {"lstrip", false}, {"normalized", false},
        {"rstrip", false},        {"single_word", false}, {"special", true}};
    chatml |= specials[i] == "<|im_start|>";
    has_eot |= specials[i] == "<|endoftext|>";
  }
  chatml = chatml && std::find(specials.begin(), specials.end(), "<|im_end|>") != specials.end();
  return {
      {"add_bos_token", false},
      {"add_prefix_space", false},
      {"added_tokens_decoder", decoder},
      {"bos_token", nullptr},
      {"chat_template", chatml ? OJson(kChatMlTemplate) : OJson()},
      {"clean_up_tokenization_spaces", false},
      {"eos_token", eos.empty() ? OJson() : OJson(eos)},
      {"errors", "replace"},
      {"model_max_length", 131072},
      {"pad_token", has_eot ? OJson("<|endoftext|>") : eos.empty() ? OJson() : OJson(eos)},
      {"split_special_tokens", false},
      {"tokenizer_class", "PreTrainedTokenizerFast"},
      {"unk_token", nullptr},
  };
}

uint64_t pair_key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

struct HeapEntry {
  int64_t count;
  uint64_t pair;
  // max-heap on count; ties go to the smaller pair (earlier tokens), deterministically
  bool operator<(const HeapEntry& o) const {
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

}  // namespace

Tokenizer train_bpe(const std::vector<std::string>& texts, const TrainOptions& o) {
  const auto& specials = o.special_tokens;
  for (size_t i = 0; i < specials.size(); ++i) {
    if (specials[i].empty()) throw TokenizerError("tokenizer.train: special token " + std::to_string(i + 1) + " is empty");
    if (find_invalid_utf8(specials[i]) != std::string::npos)
      throw TokenizerError("tokenizer.train: special token " + std::to_string(i + 1) + " is not valid UTF-8");
    for (size_t j = 0; j < i; ++j)
      if (specials[j] == specials[i])
        throw TokenizerError("tokenizer.train: special token '" + specials[i] + "' is listed twice");
  }
  const int min_size = 256 + int(specials.size());
  if (o.vocab_size < min_size)
    throw TokenizerError("tokenizer.train: vocab_size " + std::to_string(o.vocab_size) +
                         " is below 256 bytes + " + std::to_string(specials.size()) +
                         " special tokens = " + std::to_string(min_size));
  if (o.min_frequency < 1) throw TokenizerError("tokenizer.train: min_frequency must be at least 1");
  const std::string pattern = o.pattern.empty() ? std::string(kQwen2Pattern) : o.pattern;
  std::string eos = o.eos_token;
  if (eos.empty() && !specials.empty())
    eos = std::find(specials.begin(), specials.end(), "<|im_end|>") != specials.end() ? "<|im_end|>"
                                                                                       : specials[0];
  if (!eos.empty() && std::find(specials.begin(), specials.end(), eos) == specials.end())
    throw TokenizerError("tokenizer.train: eos_token '" + eos + "' is not one of the special tokens");

  // tokens[t]: the byte-level string of token t; the first 256 are the bytes in order.
  std::vector<std::string> tokens;
  std::vector<std::string> token_raw;  // raw bytes of each token
  StringIdMap raw_to_token;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(byte_level().to_utf8[b]);
    token_raw.push_back(std::string(1, char(b)));
    raw_to_token.emplace(token_raw.back(), b);
  }

  // The splitter: the final tokenizer's normaliser, pattern and special tokens.
  std::optional<Tokenizer> splitter;
  try {
    splitter.emplace(Tokenizer::from_json(tokenizer_json(tokens, {}, specials, pattern).dump()));
  } catch (const std::exception& e) {
    throw TokenizerError(std::string("tokenizer.train: the pattern is not a usable regex: ") + e.what());
  }
  Tokenizer& base = *splitter;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> counts;
  for (size_t i = 0; i < texts.size(); ++i) {
    size_t bad = find_invalid_utf8(texts[i]);
    if (bad != std::string::npos)
      throw TokenizerError("tokenizer.train: text " + std::to_string(i + 1) +
                           " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    base.impl()->walk(texts[i], [](int) {}, [&](std::string_view piece) {
      auto it = counts.find(piece);
      if (it != counts.end()) ++it->second;
      else counts.emplace(std::string(piece), 1);
    });
  }

  // Words as symbol sequences, and where each adjacent pair occurs.
  std::vector<std::vector<int>> words;
  std::vector<int64_t> freq;
  words.reserve(counts.size());
  for (auto& [w, c] : counts) {
    if (w.size() < 2) continue;  // a single byte never takes part in a merge
    std::vector<int> syms(w.size());
    for (size_t k = 0; k < w.size(); ++k) syms[k] = uint8_t(w[k]);
    words.push_back(std::move(syms));
    freq.push_back(c);
  }
  counts.clear();
  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int>> where;
  for (int w = 0; w < int(words.size()); ++w)
    for (size_t k = 0; k + 1 < words[w].size(); ++k) {
      uint64_t p = pair_key(words[w][k], words[w][k + 1]);
      pair_count[p] += freq[w];
      auto& list = where[p];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  std::priority_queue<HeapEntry> heap;
  for (auto& [p, c] : pair_count) heap.push({c, p});

  std::vector<std::pair<int, int>> merges;
  const size_t target = size_t(o.vocab_size) - specials.size();
  std::unordered_set<uint64_t> touched;
  while (tokens.size() < target && !heap.empty()) {
    HeapEntry top = heap.top();
    heap.pop();
    auto pc = pair_count.find(top.pair);
    int64_t actual = pc == pair_count.end() ? 0 : pc->second;
    if (actual != top.count) {  // stale: counts dropped since it was queued
      if (actual > 0) heap.push({actual, top.pair});
      continue;
    }
    if (actual < o.min_frequency) break;
    const int a = int(top.pair >> 32), b = int(uint32_t(top.pair));
    std::string raw = token_raw[a] + token_raw[b];
    int t;
    if (auto it = raw_to_token.find(raw); it != raw_to_token.end()) {
      t = it->second;  // the same bytes reached through another split
    } else {
      t = int(tokens.size());
      tokens.push_back(byte_level_encode(raw));
      token_raw.push_back(raw);
      raw_to_token.emplace(raw, t);
    }
    merges.emplace_back(a, b);

    std::vector<int> affected = std::move(where[top.pair]);
    where.erase(top.pair);
    touched.clear();
    for (int w : affected) {
      auto& syms = words[w];
      bool has = false;
      for (size_t k = 0; k + 1 < syms.size() && !has; ++k) has = syms[k] == a && syms[k + 1] == b;
      if (!has) continue;
      const int64_t f = freq[w];
      for (size_t k = 0; k + 1 < syms.size(); ++k) pair_count[pair_key(syms[k], syms[k + 1])] -= f;
      size_t out = 0;
      for (size_t k = 0; k < syms.size(); ++k) {
        if (k + 1 < syms.size() && syms[k] == a && syms[k + 1] == b) {
          syms[out++] = t;
          ++k;
        } else {
          syms[out++] = syms[k];
        }
      }
      syms.resize(out);
      for (size_t k = 0; k + 1 < syms.size(); ++k) {
        uint64_t p = pair_key(syms[k], syms[k + 1]);
        pair_count[p] += f;
        if (syms[k] == t || syms[k + 1] == t) {
          auto& list = where[p];
          if (list.empty() || list.back() != w) list.push_back(w);
          touched.insert(p);
        }
      }
    }
    pair_count.erase(top.pair);
    for (uint64_t p : touched) {
      auto it = pair_count.find(p);
      if (it != pair_count.end() && it->second > 0) heap.push({it->second, p});
    }
  }

  OJson tj = tokenizer_json(tokens, merges, specials, pattern);
  OJson cfg = config_json(tokens.size(), specials, eos);
  return Tokenizer::from_json(tj.dump(), cfg.dump());
}

}  // namespace tokenizer
