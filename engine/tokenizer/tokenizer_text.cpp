// Text primitives of the tokenizer: the byte-level alphabet, UTF-8 validation, NFC (ICU),
// the pre-tokenizer regex (PCRE2) and the merge table.
#include "tokenizer/tokenizer_impl.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <cstdio>

namespace tokenizer {

static void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

// Printable bytes stand for themselves; the others (controls, space, 0x7F-0xA0, 0xAD)
// take the codepoints from 256 upwards in byte order.
ByteLevelTable::ByteLevelTable() {
  auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    to_cp[b] = printable(b) ? uint32_t(b) : next++;
    append_utf8(to_utf8[b], to_cp[b]);
    from_cp[to_cp[b]] = uint8_t(b);
  }
}

const ByteLevelTable& byte_level() {
  static const ByteLevelTable table;
  return table;
}

// Decodes one UTF-8 character at s[i] (s must be valid UTF-8).
static uint32_t next_cp(std::string_view s, size_t& i) {
  uint8_t c = uint8_t(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  uint32_t cp = c & (0x7F >> len);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

std::string byte_level_decode(std::string_view token) {
  if (find_invalid_utf8(token) != std::string_view::npos)
    throw TokenizerError("token is not valid UTF-8");
  const auto& t = byte_level();
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    uint32_t cp = next_cp(token, i);
    auto it = t.from_cp.find(cp);
    if (it == t.from_cp.end()) throw TokenizerError("character outside the byte-level alphabet");
    out.push_back(char(it->second));
  }
  return out;
}

std::string byte_level_encode(std::string_view bytes) {
  const auto& t = byte_level();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += t.to_utf8[uint8_t(c)];
  return out;
}

size_t find_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    // eight ASCII bytes at a time
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
    else return i;
    if (i + len > n) return i;
    uint32_t cp = c & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

bool nfc_normalize(std::string_view in, std::string& out) {
  // Characters below U+0300 (lead bytes below 0xCC) are NFC and never compose with what
  // precedes them, so most text (ASCII, Latin-1) needs no ICU call.
  bool simple = true;
  for (char c : in)
    if (uint8_t(c) >= 0xCC) {
      simple = false;
      break;
    }
  if (simple) return false;
  UErrorCode ec = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(ec);
  if (U_FAILURE(ec)) throw TokenizerError(std::string("ICU NFC normaliser: ") + u_errorName(ec));
  icu::StringPiece sp(in.data(), int32_t(in.size()));
  if (nfc->isNormalizedUTF8(sp, ec) && U_SUCCESS(ec)) return false;
  ec = U_ZERO_ERROR;
  out.clear();
  icu::StringByteSink<std::string> sink(&out, int32_t(in.size()));
  nfc->normalizeUTF8(0, sp, sink, nullptr, ec);
  if (U_FAILURE(ec)) throw TokenizerError(std::string("NFC normalisation failed: ") + u_errorName(ec));
  return true;
}

// ---- merges -----------------------------------------------------------------

void MergeTable::build(const std::vector<std::array<int, 3>>& merges) {
  size_t cap = std::bit_ceil(std::max<size_t>(16, merges.size() * 2));
  shift_ = 64 - std::countr_zero(cap);
  mask_ = cap - 1;
  keys_.assign(cap, kEmpty);
  values_.assign(cap, Value{0, 0});
  for (size_t r = 0; r < merges.size(); ++r) {
    uint64_t key = (uint64_t(uint32_t(merges[r][0])) << 32) | uint32_t(merges[r][1]);
    size_t i = hash(key);
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    if (keys_[i] == key) continue;  // a repeated merge keeps its first (best) rank
    keys_[i] = key;
    values_[i] = Value{int(r), merges[r][2]};
  }
}

// ---- pre-tokenizer regex ------------------------------------------------------

namespace {
// Per-thread match state: match data for one pair of offsets and a JIT stack large
// enough for the backtracking of `\s+(?!\S)` over long whitespace runs.
struct MatchState {
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* ctx = pcre2_match_context_create(nullptr);
  MatchState() { pcre2_jit_stack_assign(ctx, nullptr, stack); }
  ~MatchState() {
    pcre2_match_context_free(ctx);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(md);
  }
};
}  // namespace

SplitRegex::SplitRegex(const std::string& pattern, bool fast)
    : pattern_(pattern), fast_(fast && pattern == kQwen2Pattern) {
  int err = 0;
  PCRE2_SIZE off = 0;
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw TokenizerError("pre-tokenizer pattern does not compile at offset " +
                         std::to_string(off) + ": " + reinterpret_cast<char*>(msg));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT, the interpreter still works
  code_ = code;
  if (fast_) Qwen2Splitter::prepare();
}

SplitRegex::~SplitRegex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool SplitRegex::next(std::string_view text, size_t from, size_t& begin, size_t& end) const {
  thread_local MatchState st;
  // The whole text was validated once by the caller: no UTF check per call, which would
  // make splitting quadratic.
  int rc = pcre2_match(static_cast<pcre2_code*>(code_), reinterpret_cast<PCRE2_SPTR>(text.data()),
                       text.size(), from, PCRE2_NO_UTF_CHECK, st.md, st.ctx);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw TokenizerError(std::string("pre-tokenizer pattern match failed: ") +
                         reinterpret_cast<char*>(msg));
  }
  PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.md);
  begin = ov[0];
  end = ov[1];
  return true;
}

}  // namespace tokenizer
