// Pass 1: source text to tokens. Comments vanish here, so nothing later can be fooled
// by them. Numbers keep their spelling; the parser reads their value and type.
#include <cstring>

#include "kernelc/ast.hpp"

namespace kernelc {

void error_at(Loc loc, const std::string& msg) { throw Error(Status::compile_error, loc, msg); }
void unsupported_at(Loc loc, const std::string& msg) { throw Error(Status::unsupported, loc, msg); }

std::string format_diagnostic(const Error& e) {
  std::string where = std::string(e.loc.file) + ":" + std::to_string(e.loc.line) + ":" +
                      std::to_string(e.loc.col) + ": ";
  switch (e.kind) {
    case Status::unsupported: return where + "sorry, unimplemented: " + e.what();
    default: return where + "error: " + e.what();
  }
}

static const char* kKeywords[] = {
    "void", "_Bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "struct", "union", "enum", "typedef", "static", "extern", "inline", "const", "volatile",
    "restrict", "register", "auto", "if", "else", "for", "while", "do", "switch", "case",
    "default", "break", "continue", "goto", "return", "sizeof", "_Alignof", "_Alignas",
    "_Static_assert", "_Noreturn", "_Thread_local", "_Complex", "_Atomic", "_Generic",
    "__restrict", "__restrict__", "__inline", "__inline__", "__attribute__", "__const",
    "__volatile__", "__extension__", "__typeof__", "typeof", "__signed__", "__alignof__",
    "__builtin_vector"};

static bool is_keyword(const std::string& s) {
  for (const char* k : kKeywords)
    if (s == k) return true;
  return false;
}

// Longest first, so ">>=" wins over ">>" and ">".
static const char* kPuncts[] = {"<<=", ">>=", "...", "==", "!=", "<=", ">=", "->", "+=", "-=",
                                "*=",  "/=",  "%=",  "&=", "|=", "^=", "&&", "||", "++", "--",
                                "<<",  ">>",  "##"};

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

struct Lexer {
  const std::string& s;
  const char* file;
  size_t i = 0;
  int line = 1, col = 1;
  bool bol = true, space = false;
  std::vector<Token> out;

  Loc here() const { return Loc{file, line, col}; }
  char at(size_t k) const { return i + k < s.size() ? s[i + k] : '\0'; }

  void advance(size_t n = 1) {
    while (n-- && i < s.size()) {
      if (s[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
      i++;
    }
  }

  // Backslash-newline joins lines; it is skipped wherever it appears between tokens.
  bool skip_splice() {
    if (at(0) == '\\' && at(1) == '\n') { advance(2); return true; }
    if (at(0) == '\\' && at(1) == '\r' && at(2) == '\n') { advance(3); return true; }
    return false;
  }

  void skip_block_comment() {
    Loc start = here();
    advance(2);
    while (i < s.size() && !(at(0) == '*' && at(1) == '/')) advance();
    if (i >= s.size()) error_at(start, "unterminated comment");
    advance(2);
  }

  void push(Tk kind, Loc loc, std::string text) {
    Token t;
    t.kind = kind;
    t.loc = loc;
    t.text = std::move(text);
    t.bol = bol;
    t.space = space;
    bol = space = false;
    out.push_back(std::move(t));
  }

  void read_number() {
    Loc loc = here();
    size_t start = i;
    // pp-number: digits, letters, dots, and exponent signs
    while (true) {
      char c = at(0);
      if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (at(1) == '+' || at(1) == '-')) {
        advance(2);
      } else if (isalnum((unsigned char)c) || c == '.' || c == '_') {
        advance();
      } else {
        break;
      }
    }
    push(Tk::num, loc, s.substr(start, i - start));
  }

  void read_quoted(char q) {
    Loc loc = here();
    size_t start = i;
    advance();
    while (at(0) != q) {
      if (i >= s.size() || at(0) == '\n')
        error_at(loc, std::string("missing terminating ") + q + " character");
      if (at(0) == '\\') advance();
      advance();
    }
    advance();
    push(q == '"' ? Tk::str : Tk::chr, loc, s.substr(start, i - start));
  }

  void read_punct() {
    Loc loc = here();
    for (const char* p : kPuncts) {
      size_t n = strlen(p);
      if (s.compare(i, n, p) == 0) {
        advance(n);
        push(Tk::punct, loc, p);
        return;
      }
    }
    char c = at(0);
    if (strchr("+-*/%&|^~!<>=?:;,.()[]{}#", c)) {
      advance();
      push(Tk::punct, loc, std::string(1, c));
      return;
    }
    if ((unsigned char)c >= 0x80 || !isprint((unsigned char)c))
      error_at(loc, "stray byte 0x" + [&] { char b[8]; snprintf(b, sizeof b, "%02x", (unsigned char)c); return std::string(b); }() + " in program");
    error_at(loc, std::string("stray '") + c + "' in program");
  }

  void run() {
    while (i < s.size()) {
      if (skip_splice()) continue;
      char c = at(0);
      if (c == '\n') { advance(); bol = true; space = false; continue; }
      if (isspace((unsigned char)c)) { advance(); space = true; continue; }
      if (c == '/' && at(1) == '/') {
        while (i < s.size() && at(0) != '\n') advance();
        space = true;
        continue;
      }
      if (c == '/' && at(1) == '*') { skip_block_comment(); space = true; continue; }
      if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)at(1)))) { read_number(); continue; }
      if (c == '"' || c == '\'') { read_quoted(c); continue; }
      if ((c == 'L' || c == 'u' || c == 'U') && (at(1) == '\'' || at(1) == '"')) {
        error_at(here(), "wide character literals are not used in kernels");
      }
      if (ident_start(c)) {
        Loc loc = here();
        size_t start = i;
        while (ident_char(at(0))) advance();
        std::string id = s.substr(start, i - start);
        push(is_keyword(id) ? Tk::keyword : Tk::ident, loc, id);
        continue;
      }
      read_punct();
    }
    Token e;
    e.kind = Tk::eof;
    e.loc = here();
    e.bol = true;
    out.push_back(e);
  }
};

std::vector<Token> tokenize(const std::string& src, const char* file) {
  Lexer lx{src, file};
  lx.run();
  return std::move(lx.out);
}

}  // namespace kernelc
