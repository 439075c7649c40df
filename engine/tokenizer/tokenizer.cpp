// Loading tokenizer.json, encoding, decoding and saving.
// One file over 600 lines: loading, encoding and saving read and write the same merge
// and vocabulary tables, whose layout lives only here.
#include "tokenizer/tokenizer_impl.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <queue>
#include <sstream>

namespace tokenizer {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// The split pattern of GPT-2's ByteLevel pre-tokenizer (use_regex = true).
static const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError("cannot read " + path.string() + ": no such file or not readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- JSON field access with messages that name the field ----------------------

namespace {
struct Reader {
  std::string file;  // "tokenizer.json"

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw TokenizerError(file + ": " + path + ": " + what);
  }
  const Json& need(const Json& obj, const char* key, const std::string& path) const {
    if (!obj.is_object()) fail(path, "expected an object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(path.empty() ? key : path + "." + key, "missing field");
    return *it;
  }
  std::string str(const Json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, std::string("expected a string, got ") + v.type_name());
    return v.get<std::string>();
  }
  bool flag(const Json& obj, const char* key, bool def, const std::string& path) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return def;
    if (!it->is_boolean()) fail(path + "." + key, "expected true or false");
    return it->get<bool>();
  }
  std::string type(const Json& obj, const std::string& path) const {
    return str(need(obj, "type", path), path + ".type");
  }
};

Json parse_json(const std::string& text, const std::string& file) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw TokenizerError(file + ": malformed JSON: " + e.what());
  }
}

// The content of a token field written as a string or as {"content": ...}.
std::optional<std::string> token_content(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}
}  // namespace

void Tokenizer::Impl::check_id(int id) const {
  if (id < 0 || id >= size() || !id_present[id])
    throw TokenizerError("token id " + std::to_string(id) + " is not in the vocabulary (size " +
                         std::to_string(size()) + ")");
}

// ---- loading ------------------------------------------------------------------

static void load_pre_tokenizer(Tokenizer::Impl& im, const Json& pt, const Reader& r,
                               const std::string& path, bool& byte_level_seen) {
  if (pt.is_null()) return;
  std::string type = r.type(pt, path);
  if (type == "Sequence") {
    const Json& list = r.need(pt, "pretokenizers", path);
    if (!list.is_array()) r.fail(path + ".pretokenizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      load_pre_tokenizer(im, list[i], r, path + ".pretokenizers[" + std::to_string(i) + "]",
                         byte_level_seen);
  } else if (type == "Split") {
    if (im.split) r.fail(path, "only one Split step is supported");
    const Json& pat = r.need(pt, "pattern", path);
    std::string regex;
    if (pat.contains("Regex")) regex = r.str(pat["Regex"], path + ".pattern.Regex");
    else if (pat.contains("String")) regex = "\\Q" + r.str(pat["String"], path + ".pattern.String") + "\\E";
    else r.fail(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
    std::string behavior = r.str(r.need(pt, "behavior", path), path + ".behavior");
    if (behavior != "Isolated")
      r.fail(path + ".behavior", "unsupported split behavior '" + behavior + "' (only Isolated)");
    if (r.flag(pt, "invert", false, path)) r.fail(path + ".invert", "inverted splits are not supported");
    try {
      im.split = std::make_unique<SplitRegex>(regex);
    } catch (const TokenizerError& e) {
      r.fail(path + ".pattern", e.what());
    }
  } else if (type == "ByteLevel") {
    byte_level_seen = true;
    im.add_prefix_space = r.flag(pt, "add_prefix_space", false, path);
    if (r.flag(pt, "use_regex", true, path)) {
      if (im.split) r.fail(path, "ByteLevel with use_regex after a Split is not supported");
      im.split = std::make_unique<SplitRegex>(kGpt2Pattern);
    }
  } else {
    r.fail(path + ".type", "unsupported pre-tokenizer type '" + type + "'");
  }
}

static void load_normalizer(Tokenizer::Impl& im, const Json& n, const Reader& r,
                            const std::string& path) {
  if (n.is_null()) return;
  std::string type = r.type(n, path);
  if (type == "NFC") {
    im.nfc = true;
  } else if (type == "Sequence") {
    const Json& list = r.need(n, "normalizers", path);
    if (!list.is_array()) r.fail(path + ".normalizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      load_normalizer(im, list[i], r, path + ".normalizers[" + std::to_string(i) + "]");
  } else {
    r.fail(path + ".type", "unsupported normalizer type '" + type + "' (only NFC)");
  }
}

static void check_decoder(const Json& d, const Reader& r, const std::string& path) {
  if (d.is_null()) return;
  std::string type = r.type(d, path);
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const Json& list = r.need(d, "decoders", path);
    for (size_t i = 0; i < list.size(); ++i)
      check_decoder(list[i], r, path + ".decoders[" + std::to_string(i) + "]");
    return;
  }
  r.fail(path + ".type", "unsupported decoder type '" + type + "' (only ByteLevel)");
}

static void set_token(Tokenizer::Impl& im, int id, const std::string& token, std::string bytes) {
  if (id >= im.size()) {
    im.id_token.resize(id + 1);
    im.id_bytes.resize(id + 1);
    im.id_special.resize(id + 1, 0);
    im.id_present.resize(id + 1, 0);
  }
  im.id_token[id] = token;
  im.id_bytes[id] = std::move(bytes);
  im.id_present[id] = 1;
}

static void load_model(Tokenizer::Impl& im, const Json& model, const Reader& r) {
  if (model.contains("type")) {
    std::string type = r.type(model, "model");
    if (type != "BPE")
      r.fail("model.type", "unknown model type '" + type + "' (only byte-level BPE is supported)");
  }
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0.0)
    r.fail("model.dropout", "BPE dropout is not supported");
  if (r.flag(model, "byte_fallback", false, "model"))
    r.fail("model.byte_fallback", "byte fallback is not supported (byte-level BPE needs none)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && model[key] != "")
      r.fail(std::string("model.") + key, "subword affixes are not supported");
  im.ignore_merges = r.flag(model, "ignore_merges", false, "model");

  const Json& vocab = r.need(model, "vocab", "model");
  if (!vocab.is_object()) r.fail("model.vocab", "expected an object of token -> id");
  im.vocab.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() > (1 << 30))
      r.fail("model.vocab[\"" + it.key() + "\"]", "expected a non-negative integer id");
    int id = it.value().get<int>();
    std::string bytes;
    try {
      bytes = byte_level_decode(it.key());
    } catch (const TokenizerError& e) {
      r.fail("model.vocab[\"" + it.key() + "\"]", std::string(e.what()) + " (id " + std::to_string(id) + ")");
    }
    im.vocab.emplace(it.key(), id);
    set_token(im, id, it.key(), std::move(bytes));
  }
  const auto& bl = byte_level();
  for (int b = 0; b < 256; ++b) {
    auto it = im.vocab.find(bl.to_utf8[b]);
    if (it == im.vocab.end()) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", b);
      r.fail("model.vocab", std::string("no token for byte ") + hex + " ('" + bl.to_utf8[b] +
                                "'): not a byte-level BPE vocabulary");
    }
    im.byte_id[b] = it->second;
  }

  const Json& merges = r.need(model, "merges", "model");
  if (!merges.is_array()) r.fail("model.merges", "expected an array");
  im.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    std::string path = "model.merges[" + std::to_string(i) + "]";
    std::string a, b;
    const Json& m = merges[i];
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        r.fail(path, "expected \"left right\", got \"" + s + "\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      r.fail(path, "expected \"left right\" or [left, right]");
    }
    auto ia = im.vocab.find(a), ib = im.vocab.find(b), iab = im.vocab.find(a + b);
    if (ia == im.vocab.end()) r.fail(path, "'" + a + "' is not in the vocabulary");
    if (ib == im.vocab.end()) r.fail(path, "'" + b + "' is not in the vocabulary");
    if (iab == im.vocab.end()) r.fail(path, "the merged token '" + a + b + "' is not in the vocabulary");
    im.merges.push_back({ia->second, ib->second, iab->second});
  }
  im.merge_table.build(im.merges);
}

static void load_added(Tokenizer::Impl& im, const Json& added, const Reader& r) {
  if (added.is_null()) return;
  if (!added.is_array()) r.fail("added_tokens", "expected an array");
  for (size_t i = 0; i < added.size(); ++i) {
    std::string path = "added_tokens[" + std::to_string(i) + "]";
    const Json& a = added[i];
    AddedToken t;
    const Json& id = r.need(a, "id", path);
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > (1 << 30))
      r.fail(path + ".id", "expected a non-negative integer");
    t.id = id.get<int>();
    t.content = r.str(r.need(a, "content", path), path + ".content");
    if (t.content.empty()) r.fail(path + ".content", "empty added token");
    if (find_invalid_utf8(t.content) != std::string::npos) r.fail(path + ".content", "not valid UTF-8");
    t.special = r.flag(a, "special", false, path);
    t.lstrip = r.flag(a, "lstrip", false, path);
    t.rstrip = r.flag(a, "rstrip", false, path);
    t.single_word = r.flag(a, "single_word", false, path);
    t.normalized = r.flag(a, "normalized", !t.special, path);
    set_token(im, t.id, t.content, t.content);
    im.id_special[t.id] = t.special;
    im.any_normalized_added |= t.normalized;
    im.added.push_back(std::move(t));
  }
  for (int i = 0; i < int(im.added.size()); ++i)
    im.added_by_first_byte[uint8_t(im.added[i].content[0])].push_back(i);
  for (auto& list : im.added_by_first_byte)
    std::stable_sort(list.begin(), list.end(), [&](int x, int y) {
      return im.added[x].content.size() > im.added[y].content.size();
    });
}

// Ids named by eos_token_id in config.json / generation_config.json (an int or a list).
static void add_eos_ids(std::vector<int>& out, const Json& cfg) {
  if (!cfg.is_object() || !cfg.contains("eos_token_id")) return;
  const Json& v = cfg["eos_token_id"];
  if (v.is_number_integer()) out.push_back(v.get<int>());
  else if (v.is_array())
    for (const auto& x : v)
      if (x.is_number_integer()) out.push_back(x.get<int>());
}

static void load_config(Tokenizer::Impl& im, const Json& cfg) {
  Reader r{"tokenizer_config.json"};
  if (!cfg.is_object()) r.fail("(top level)", "expected an object");
  im.config = cfg;
  if (cfg.contains("chat_template")) {
    const Json& t = cfg["chat_template"];
    if (t.is_string()) {
      im.chat_template = t.get<std::string>();
    } else if (t.is_array()) {  // named templates: the "default" one
      for (const auto& e : t)
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template"))
          im.chat_template = r.str(e["template"], "chat_template[default].template");
    } else if (!t.is_null()) {
      r.fail("chat_template", "expected a string or a list of named templates");
    }
  }
  if (cfg.contains("eos_token") && !cfg["eos_token"].is_null()) {
    auto eos = token_content(cfg["eos_token"]);
    if (!eos) r.fail("eos_token", "expected a string or {\"content\": ...}");
    auto id = im.find_token(*eos);
    if (!id) r.fail("eos_token", "'" + *eos + "' is not a token of tokenizer.json");
    im.stop_ids.push_back(*id);
  }
}

static std::shared_ptr<Tokenizer::Impl> build(const std::string& tokenizer_json,
                                              const std::string& config_json) {
  auto im = std::make_shared<Tokenizer::Impl>();
  Reader r{"tokenizer.json"};
  Json j = parse_json(tokenizer_json, "tokenizer.json");
  if (!j.is_object()) r.fail("(top level)", "expected an object");
  load_model(*im, r.need(j, "model", ""), r);
  load_added(*im, j.value("added_tokens", Json()), r);
  load_normalizer(*im, j.value("normalizer", Json()), r, "normalizer");
  bool byte_level_seen = false;
  load_pre_tokenizer(*im, j.value("pre_tokenizer", Json()), r, "pre_tokenizer", byte_level_seen);
  if (!byte_level_seen)
    r.fail("pre_tokenizer", "no ByteLevel step: only byte-level BPE tokenizers are supported");
  check_decoder(j.value("decoder", Json()), r, "decoder");
  if (!config_json.empty()) load_config(*im, parse_json(config_json, "tokenizer_config.json"));
  return im;
}

Tokenizer Tokenizer::from_json(const std::string& tokenizer_json, const std::string& config_json) {
  auto im = build(tokenizer_json, config_json);
  std::sort(im->stop_ids.begin(), im->stop_ids.end());
  return Tokenizer(std::move(im));
}

Tokenizer Tokenizer::load(const fs::path& path) {
  fs::path dir = path, file = path / "tokenizer.json";
  if (fs::is_regular_file(path)) {
    dir = path.parent_path();
    file = path;
  } else if (!fs::exists(path)) {
    throw TokenizerError("tokenizer: " + path.string() + " does not exist");
  }
  if (!fs::exists(file)) throw TokenizerError("tokenizer: missing " + file.string());
  std::string config;
  if (fs::exists(dir / "tokenizer_config.json")) config = read_text_file(dir / "tokenizer_config.json");
  std::shared_ptr<Impl> im;
  try {
    im = build(read_text_file(file), config);
  } catch (const TokenizerError& e) {
    throw TokenizerError(dir.string() + "/" + e.what());
  }
  for (const char* extra : {"generation_config.json", "config.json"}) {
    if (!fs::exists(dir / extra)) continue;
    Json cfg = parse_json(read_text_file(dir / extra), (dir / extra).string());
    add_eos_ids(im->stop_ids, cfg);
  }
  std::sort(im->stop_ids.begin(), im->stop_ids.end());
  im->stop_ids.erase(std::unique(im->stop_ids.begin(), im->stop_ids.end()), im->stop_ids.end());
  return Tokenizer(std::move(im));
}

// ---- encoding -------------------------------------------------------------------

namespace {
struct Sym {
  int id, prev, next;
};
struct Cand {
  int rank, pos, id;
  bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};
}  // namespace

// Merges the lowest-ranked adjacent pair first (ties: leftmost), as `tokenizers` does;
// a heap with lazy invalidation keeps long words (whitespace runs, digit-free blobs)
// at n log n.
void Tokenizer::Impl::bpe_word(std::string_view piece, std::vector<int>& out) const {
  if (ignore_merges) {
    auto it = vocab.find(byte_level_encode(piece));
    if (it != vocab.end()) {
      out.push_back(it->second);
      return;
    }
  }
  thread_local std::vector<Sym> syms;
  thread_local std::vector<Cand> heap;
  const int n = int(piece.size());
  syms.resize(n);
  heap.clear();
  for (int i = 0; i < n; ++i) syms[i] = Sym{byte_id[uint8_t(piece[i])], i - 1, i + 1 < n ? i + 1 : -1};
  for (int i = 0; i + 1 < n; ++i)
    if (auto* m = merge_table.find(syms[i].id, syms[i + 1].id)) heap.push_back({m->rank, i, m->id});
  auto cmp = std::greater<Cand>();
  std::make_heap(heap.begin(), heap.end(), cmp);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    Cand c = heap.back();
    heap.pop_back();
    Sym& s = syms[c.pos];
    if (s.id < 0 || s.next < 0) continue;
    const auto* m = merge_table.find(s.id, syms[s.next].id);
    if (!m || m->id != c.id) continue;  // stale: a neighbour changed since it was queued
    int right = s.next;
    s.id = c.id;
    s.next = syms[right].next;
    if (s.next >= 0) syms[s.next].prev = c.pos;
    syms[right].id = -1;
    if (s.prev >= 0)
      if (auto* p = merge_table.find(syms[s.prev].id, s.id)) {
        heap.push_back({p->rank, s.prev, p->id});
        std::push_heap(heap.begin(), heap.end(), cmp);
      }
    if (s.next >= 0)
      if (auto* p = merge_table.find(s.id, syms[s.next].id)) {
        heap.push_back({p->rank, c.pos, p->id});
        std::push_heap(heap.begin(), heap.end(), cmp);
      }
  }
  for (int i = 0; i >= 0; i = syms[i].next) out.push_back(syms[i].id);
}

uint64_t Tokenizer::Impl::next_cache_serial() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

namespace {
// An open-addressing map word -> ids with keys and ids in flat pools: one probe into a
// contiguous slot array per word instead of a node walk.
class WordCache {
 public:
  uint64_t serial = 0;

  void reset(uint64_t s) {
    serial = s;
    slots_.assign(1 << 12, Slot{});
    keys_.clear();
    ids_.clear();
    size_ = 0;
  }
  // Appends the cached ids of word to out; false when absent.
  bool get(std::string_view word, uint64_t h, std::vector<int>& out) const {
    if (slots_.empty()) return false;
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.n_ids == 0) return false;
      if (s.hash == h && s.key_len == word.size() &&
          std::memcmp(keys_.data() + s.key_off, word.data(), word.size()) == 0) {
        out.insert(out.end(), ids_.data() + s.ids_off, ids_.data() + s.ids_off + s.n_ids);
        return true;
      }
    }
  }
  void put(std::string_view word, uint64_t h, const int* ids, size_t n, size_t max_entries) {
    if (n == 0 || n > 0xFFFF || word.size() > 0xFFFF || size_ >= max_entries) return;
    if (slots_.empty()) slots_.assign(1 << 12, Slot{});
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1, i = h & mask;
    while (slots_[i].n_ids != 0) i = (i + 1) & mask;
    slots_[i] = Slot{h, uint32_t(keys_.size()), uint32_t(ids_.size()), uint16_t(word.size()), uint16_t(n)};
    keys_.append(word);
    ids_.insert(ids_.end(), ids, ids + n);
    ++size_;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_off = 0, ids_off = 0;
    uint16_t key_len = 0, n_ids = 0;  // n_ids == 0: empty
  };
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.n_ids == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].n_ids != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<int> ids_;
  size_t size_ = 0;
};
}  // namespace

void Tokenizer::Impl::bpe(std::string_view piece, std::vector<int>& out) const {
  if (piece.size() == 1) {
    out.push_back(byte_id[uint8_t(piece[0])]);
    return;
  }
  if (!cache_enabled.load(std::memory_order_relaxed) || piece.size() > kCacheMaxWordBytes) {
    bpe_word(piece, out);
    return;
  }
  thread_local WordCache cache;
  uint64_t serial = cache_serial.load(std::memory_order_relaxed);
  if (cache.serial != serial) cache.reset(serial);
  uint64_t h = std::hash<std::string_view>{}(piece);
  if (cache.get(piece, h, out)) return;
  size_t before = out.size();
  bpe_word(piece, out);
  cache.put(piece, h, out.data() + before, out.size() - before, kCacheMaxEntries);
}

static std::vector<int> encode_text(const Tokenizer::Impl& im, const std::string& text, bool special) {
  size_t bad = find_invalid_utf8(text);
  if (bad != std::string::npos)
    throw TokenizerError("tokenizer:encode: the text is not valid UTF-8 (byte " +
                         std::to_string(bad) + ")");
  std::vector<int> out;
  out.reserve(text.size() / 3 + 4);
  im.walk(text, [&](int idx) { out.push_back(im.added[idx].id); },
          [&](std::string_view piece) { im.bpe(piece, out); }, special);
  return out;
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
  return encode_text(*impl_, text, true);
}

std::vector<int> Tokenizer::encode_ordinary(const std::string& text) const {
  return encode_text(*impl_, text, false);
}

void Tokenizer::clear_cache() const { impl_->cache_serial = Impl::next_cache_serial(); }

void Tokenizer::set_cache_enabled(bool on) const { impl_->cache_enabled = on; }

// ---- decoding and lookups ---------------------------------------------------------

std::string Tokenizer::decode(const std::vector<int>& ids, bool skip_special) const {
  const Impl& im = *impl_;
  size_t total = 0;
  for (int id : ids) {
    im.check_id(id);
    total += im.id_bytes[id].size();
  }
  std::string out;
  out.reserve(total);
  for (int id : ids)
    if (!(skip_special && im.id_special[id])) out += im.id_bytes[id];
  return out;
}

const std::string& Tokenizer::token_bytes(int id) const {
  impl_->check_id(id);
  return impl_->id_bytes[id];
}

int Tokenizer::vocab_size() const { return impl_->size(); }

std::optional<int> Tokenizer::Impl::find_token(std::string_view token) const {
  for (const auto& a : added)
    if (a.content == token) return a.id;
  auto it = vocab.find(token);
  if (it != vocab.end()) return it->second;
  return std::nullopt;
}

std::optional<int> Tokenizer::token_to_id(const std::string& token) const {
  return impl_->find_token(token);
}

std::string Tokenizer::id_to_token(int id) const {
  impl_->check_id(id);
  return impl_->id_token[id];
}

const std::vector<AddedToken>& Tokenizer::added_tokens() const { return impl_->added; }

std::vector<int> Tokenizer::stop_ids() const { return impl_->stop_ids; }

// ---- saving -----------------------------------------------------------------------

void Tokenizer::save(const fs::path& dir) const {
  using OJson = nlohmann::ordered_json;
  const Impl& im = *impl_;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw TokenizerError("tokenizer:save: cannot create " + dir.string() + ": " + ec.message());

  OJson added = OJson::array();
  for (const auto& a : im.added)
    added.push_back({{"id", a.id}, {"content", a.content}, {"single_word", a.single_word},
                     {"lstrip", a.lstrip}, {"rstrip", a.rstrip}, {"normalized", a.normalized},
                     {"special", a.special}});
  OJson byte_level_step = {{"type", "ByteLevel"}, {"add_prefix_space", im.add_prefix_space},
                           {"trim_offsets", false}, {"use_regex", false}};
  OJson pre = OJson::array();
  if (im.split)
    pre.push_back({{"type", "Split"}, {"pattern", {{"Regex", im.split->pattern()}}},
                   {"behavior", "Isolated"}, {"invert", false}});
  pre.push_back(byte_level_step);

  // The vocabulary in id order (added tokens live in added_tokens only).
  std::vector<std::pair<int, const std::string*>> by_id;
  by_id.reserve(im.vocab.size());
  for (const auto& [tok, id] : im.vocab) by_id.emplace_back(id, &tok);
  std::sort(by_id.begin(), by_id.end());
  OJson vocab = OJson::object();
  for (const auto& [id, tok] : by_id) vocab[*tok] = id;
  OJson merges = OJson::array();
  for (const auto& m : im.merges) merges.push_back({im.id_token[m[0]], im.id_token[m[1]]});

  OJson tj = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", im.nfc ? OJson{{"type", "NFC"}} : OJson()},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", pre}}},
      {"post_processor", byte_level_step},
      {"decoder", byte_level_step},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
        {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
        {"byte_fallback", false}, {"ignore_merges", im.ignore_merges}, {"vocab", vocab},
        {"merges", merges}}},
  };
  auto write = [&](const fs::path& p, const std::string& text) {
    fs::path tmp = p;
    tmp += ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out) throw TokenizerError("tokenizer:save: cannot write " + tmp.string());
    }
    fs::rename(tmp, p);
  };
  write(dir / "tokenizer.json", tj.dump(2, ' ', false) + "\n");
  write(dir / "tokenizer_config.json", im.config.dump(2, ' ', false) + "\n");
}

}  // namespace tokenizer
