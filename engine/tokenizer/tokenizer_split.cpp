// A direct matcher for the Qwen2 split pattern
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N} |
//    ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//
// taking the alternatives in order as a backtracking engine does. The classes \p{L},
// \p{N} and \s are read off PCRE2 (UTF + UCP) once, so both paths agree by construction
// on every codepoint; tests compare them on random text.
#include "tokenizer/tokenizer_impl.hpp"

#include <cctype>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace tokenizer {

const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

namespace {

enum : uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 4 };

// One class byte per codepoint, 0..0x10FFFF.
struct ClassTable {
  std::vector<uint8_t> cls;
  ClassTable() : cls(0x110000, kOther) {
    // All scalar values in order, as UTF-8; offsets map back to codepoints.
    std::string all;
    std::vector<uint32_t> at_offset;  // codepoint starting at each byte offset
    all.reserve(4400000);
    at_offset.reserve(4400000);
    for (uint32_t cp = 0; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      if (cp < 0x80) {
        all.push_back(char(cp));
      } else if (cp < 0x800) {
        all.push_back(char(0xC0 | (cp >> 6)));
        all.push_back(char(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        all.push_back(char(0xE0 | (cp >> 12)));
        all.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        all.push_back(char(0x80 | (cp & 0x3F)));
      } else {
        all.push_back(char(0xF0 | (cp >> 18)));
        all.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        all.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        all.push_back(char(0x80 | (cp & 0x3F)));
      }
      at_offset.resize(all.size(), cp);
    }
    mark(all, at_offset, R"(\p{L}+)", kLetter);
    mark(all, at_offset, R"(\p{N}+)", kNumber);
    mark(all, at_offset, R"(\s+)", kSpace);
  }

  void mark(const std::string& all, const std::vector<uint32_t>& at_offset, const char* pat,
            uint8_t bit) {
    int err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat), PCRE2_ZERO_TERMINATED,
                                     PCRE2_UTF | PCRE2_UCP, &err, &off, nullptr);
    if (!code) throw TokenizerError("cannot compile the character class pattern");
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
    size_t from = 0;
    while (from < all.size()) {
      int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(all.data()), all.size(), from,
                           from ? PCRE2_NO_UTF_CHECK : 0, md, nullptr);
      if (rc < 0) break;
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
      for (size_t o = ov[0]; o < ov[1]; ++o)
        if (o == 0 || at_offset[o] != at_offset[o - 1]) cls[at_offset[o]] |= bit;
      from = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
    }
    pcre2_match_data_free(md);
    pcre2_code_free(code);
  }
};

const ClassTable& classes() {
  static const ClassTable table;
  return table;
}

// Decodes the codepoint at text[i] (valid UTF-8); sets len to its byte length.
inline uint32_t decode_at(std::string_view text, size_t i, size_t& len) {
  uint8_t c = uint8_t(text[i]);
  if (c < 0x80) {
    len = 1;
    return c;
  }
  if (c < 0xE0) {
    len = 2;
    return ((c & 0x1F) << 6) | (uint8_t(text[i + 1]) & 0x3F);
  }
  if (c < 0xF0) {
    len = 3;
    return ((c & 0x0F) << 12) | ((uint8_t(text[i + 1]) & 0x3F) << 6) | (uint8_t(text[i + 2]) & 0x3F);
  }
  len = 4;
  return ((c & 0x07) << 18) | ((uint8_t(text[i + 1]) & 0x3F) << 12) |
         ((uint8_t(text[i + 2]) & 0x3F) << 6) | (uint8_t(text[i + 3]) & 0x3F);
}

struct Cursor {
  std::string_view text;
  const uint8_t* cls;
  // Class and length of the character at i; kEnd past the end.
  static constexpr uint8_t kEnd = 0x80;
  uint8_t at(size_t i, size_t& len, uint32_t* cp = nullptr) const {
    if (i >= text.size()) {
      len = 0;
      return kEnd;
    }
    uint32_t c = decode_at(text, i, len);
    if (cp) *cp = c;
    return cls[c];
  }
};

// Matches one of s, t, re, ve, m, ll, d after an apostrophe, caselessly as PCRE2 does
// (ſ, U+017F, folds to s). Returns the end, or 0.
size_t contraction_end(std::string_view t, size_t i) {
  auto lower = [&](size_t k) -> int {
    if (k >= t.size()) return -1;
    unsigned char c = uint8_t(t[k]);
    if (c < 0x80) return std::tolower(c);
    if (c == 0xC5 && k + 1 < t.size() && uint8_t(t[k + 1]) == 0xBF) return 0x17F;
    return -1;
  };
  int a = lower(i);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 1;
  if (a == 0x17F) return i + 2;
  int b = lower(i + 1);
  if ((a == 'r' || a == 'v') && b == 'e') return i + 2;
  if (a == 'l' && b == 'l') return i + 2;
  return 0;
}

}  // namespace

void Qwen2Splitter::prepare() { classes(); }

size_t Qwen2Splitter::match_end(std::string_view text, size_t i) {
  static const uint8_t* cls = classes().cls.data();
  Cursor cur{text, cls};
  size_t len0;
  uint32_t c0;
  uint8_t k0 = cur.at(i, len0, &c0);

  // 1. contractions
  if (c0 == '\'') {
    if (size_t e = contraction_end(text, i + 1)) return e;
  }
  auto letters_from = [&](size_t p) {  // end of \p{L}+ starting at p (p holds a letter)
    size_t len;
    while (cur.at(p, len) & kLetter) p += len;
    return p;
  };
  // 2. [^\r\n\p{L}\p{N}]?\p{L}+
  if (k0 & kLetter) return letters_from(i);
  size_t len1;
  uint8_t k1 = cur.at(i + len0, len1);
  const bool crlf0 = c0 == '\r' || c0 == '\n';
  if (!crlf0 && !(k0 & kNumber) && k1 != Cursor::kEnd && (k1 & kLetter))
    return letters_from(i + len0);
  // 3. \p{N}
  if (k0 & kNumber) return i + len0;
  // 4.  ?[^\s\p{L}\p{N}]+[\r\n]*
  auto is_punct = [](uint8_t k) { return k != Cursor::kEnd && !(k & (kSpace | kLetter | kNumber)); };
  if ((c0 == ' ' && is_punct(k1)) || is_punct(k0)) {
    size_t p = is_punct(k0) ? i : i + 1;
    size_t len;
    while (is_punct(cur.at(p, len))) p += len;
    while (p < text.size() && (text[p] == '\r' || text[p] == '\n')) ++p;
    return p;
  }
  // k0 is whitespace from here on. The run of whitespace [i, j) and its last CR/LF.
  size_t j = i, last_crlf = std::string_view::npos, run_chars = 0, prev = i;
  {
    size_t len;
    while (true) {
      uint32_t cp;
      uint8_t k = cur.at(j, len, &cp);
      if (k == Cursor::kEnd || !(k & kSpace)) break;
      if (cp == '\r' || cp == '\n') last_crlf = j;
      prev = j;
      j += len;
      ++run_chars;
    }
  }
  // 5. \s*[\r\n]+
  if (last_crlf != std::string_view::npos) return last_crlf + 1;
  // 6. \s+(?!\S): at the end of the text the whole run; else all but its last character
  if (j >= text.size()) return j;
  if (run_chars >= 2) return prev;
  // 7. \s+
  return j;
}

}  // namespace tokenizer
