// Pass 2: the preprocessor. Directives, macro expansion (Prosser's algorithm: every
// token carries the set of macros it came from, which never expand in it again), and
// #include of the front end's own headers. #pragma lines become single pragma tokens
// the parser reads; OpenMP pragmas are macro-expanded as gcc -fopenmp does.
#include <cstring>
#include <map>
#include <mutex>

#include "kernelc/ast.hpp"

namespace kernelc {

namespace {

constexpr size_t kMaxTokens = 500'000;  // a macro bomb ends here, not in a hang
constexpr int kMaxIncludeDepth = 32;

using Hideset = std::shared_ptr<const std::set<std::string>>;

struct Macro {
  bool function_like = false;
  std::vector<std::string> params;
  bool variadic = false;
  std::vector<Token> body;
  Loc loc;
};

bool is_name(const Token& t) { return t.kind == Tk::ident || t.kind == Tk::keyword; }

bool hidden(const Token& t, const std::string& name) { return t.hideset && t.hideset->count(name); }

Hideset with(const Hideset& hs, const std::string& name) {
  auto s = hs ? std::make_shared<std::set<std::string>>(*hs) : std::make_shared<std::set<std::string>>();
  s->insert(name);
  return s;
}

struct Cond {
  bool taking;     // this group's lines are kept
  bool any_taken;  // some group of this #if was kept
  bool parent_taking;
  bool seen_else;
  Loc loc;
};

struct Preprocessor {
  std::deque<Token> in;
  std::vector<Token> out;
  std::map<std::string, Macro> macros;
  std::vector<Cond> conds;
  std::set<std::string> included;
  int include_depth = 0;
  size_t produced = 0;

  bool taking() const { return conds.empty() || conds.back().taking; }

  Token take() {
    Token t = std::move(in.front());
    in.pop_front();
    return t;
  }

  // The rest of the directive's line.
  std::vector<Token> line() {
    std::vector<Token> v;
    while (!in.empty() && in.front().kind != Tk::eof && !in.front().bol) v.push_back(take());
    return v;
  }

  void count(size_t n) {
    produced += n;
    // Past this, gcc decides (and meets the compile timeout where the expansion is a
    // bomb), so a kernel gets the same verdict from both back ends.
    if (produced > kMaxTokens)
      unsupported_at(in.empty() ? Loc{} : in.front().loc, "macro expansion beyond the front end's limit");
  }

  // ---- #define ----------------------------------------------------------------------

  void define(const std::vector<Token>& l, Loc at) {
    if (l.empty() || !is_name(l[0])) error_at(at, "macro names must be identifiers");
    Macro m;
    m.loc = l[0].loc;
    size_t i = 1;
    if (i < l.size() && l[i].is("(") && !l[i].space) {
      m.function_like = true;
      i++;
      while (i < l.size() && !l[i].is(")")) {
        if (l[i].is("...")) {
          m.variadic = true;
          i++;
          break;
        }
        if (!is_name(l[i])) error_at(l[i].loc, "expected parameter name, found \"" + l[i].text + "\"");
        m.params.push_back(l[i].text);
        i++;
        if (i < l.size() && l[i].is(",")) i++;
        else if (i < l.size() && !l[i].is(")") && !l[i].is("...")) error_at(l[i].loc, "expected ',' or ')' in macro parameter list");
      }
      if (i >= l.size() || !l[i].is(")")) error_at(l[0].loc, "missing ')' in macro parameter list");
      i++;
    }
    m.body.assign(l.begin() + i, l.end());
    macros[l[0].text] = std::move(m);
  }

  // ---- expansion ----------------------------------------------------------------------

  // Reads a function-like macro's arguments from `src` (after its name); false when no
  // '(' follows, in which case the name is an ordinary identifier.
  template <class Src>
  bool read_args(Src& src, const Macro& m, const Token& name, std::vector<std::vector<Token>>& args, Token& rparen) {
    if (src.empty() || !src.front().is("(")) return false;
    src.pop_front();
    int depth = 0;
    args.emplace_back();
    while (true) {
      if (src.empty() || src.front().kind == Tk::eof)
        error_at(name.loc, "unterminated argument list invoking macro \"" + name.text + "\"");
      Token t = std::move(src.front());
      src.pop_front();
      if (depth == 0 && t.is(")")) { rparen = t; break; }
      if (depth == 0 && t.is(",") && !(m.variadic && args.size() > m.params.size())) {
        args.emplace_back();
        continue;
      }
      if (t.is("(")) depth++;
      if (t.is(")")) depth--;
      args.back().push_back(std::move(t));
    }
    size_t want = m.params.size();
    if (args.size() == 1 && args[0].empty() && want == 0) args.clear();
    if (m.variadic) {
      if (args.size() < want) {
        error_at(name.loc, "macro \"" + name.text + "\" requires at least " + std::to_string(want) + " arguments, but only " + std::to_string(args.size()) + " given");
      }
      if (args.size() == want) args.emplace_back();
    } else if (args.size() != want) {
      error_at(name.loc, "macro \"" + name.text + "\" " + (args.size() > want ? "passed " : "requires ") +
                             std::to_string(args.size() > want ? args.size() : want) + " arguments, but " +
                             (args.size() > want ? "takes just " + std::to_string(want) : "only " + std::to_string(args.size()) + " given"));
    }
    return true;
  }

  static Token stringize(const std::vector<Token>& arg, Loc loc) {
    std::string s = "\"";
    for (size_t i = 0; i < arg.size(); i++) {
      if (i && arg[i].space) s += ' ';
      for (char c : arg[i].text) {
        if ((arg[i].kind == Tk::str || arg[i].kind == Tk::chr) && (c == '"' || c == '\\')) s += '\\';
        s += c;
      }
    }
    s += '"';
    Token t;
    t.kind = Tk::str;
    t.text = s;
    t.loc = loc;
    return t;
  }

  static Token paste(const Token& a, const Token& b) {
    std::string text = a.text + b.text;
    std::vector<Token> v = tokenize(text, a.loc.file);
    if (v.size() != 2) error_at(a.loc, "pasting \"" + a.text + "\" and \"" + b.text + "\" does not give a valid preprocessing token");
    Token t = v[0];
    t.loc = a.loc;
    t.space = a.space;
    t.hideset = a.hideset;
    return t;
  }

  // Macro-expands a token list completely, on its own (arguments before substitution).
  std::vector<Token> expand_list(std::vector<Token> toks) {
    std::deque<Token> src(toks.begin(), toks.end());
    std::vector<Token> res;
    while (!src.empty()) {
      Token t = std::move(src.front());
      src.pop_front();
      if (!try_expand(t, src)) res.push_back(std::move(t));
    }
    return res;
  }

  int param_index(const Macro& m, const Token& t) const {
    if (!is_name(t)) return -1;
    for (size_t i = 0; i < m.params.size(); i++)
      if (m.params[i] == t.text) return (int)i;
    if (m.variadic && t.text == "__VA_ARGS__") return (int)m.params.size();
    return -1;
  }

  std::vector<Token> substitute(const Macro& m, const std::vector<std::vector<Token>>& args, const Hideset& hs, Loc at) {
    std::vector<Token> res;
    std::vector<std::vector<Token>> expanded(args.size());
    std::vector<bool> done(args.size(), false);
    const auto& b = m.body;
    for (size_t i = 0; i < b.size(); i++) {
      const Token& t = b[i];
      if (t.is("#") && m.function_like) {
        int p = i + 1 < b.size() ? param_index(m, b[i + 1]) : -1;
        if (p < 0) error_at(t.loc, "'#' is not followed by a macro parameter");
        res.push_back(stringize(args[p], at));
        i++;
        continue;
      }
      if (t.is("##")) {
        if (res.empty() || i + 1 >= b.size()) error_at(t.loc, "'##' cannot appear at either end of a macro expansion");
        const Token& n = b[++i];
        int p = param_index(m, n);
        if (p >= 0) {
          if (args[p].empty()) continue;
          Token l = res.back();
          res.back() = paste(l, args[p][0]);
          res.insert(res.end(), args[p].begin() + 1, args[p].end());
        } else {
          res.back() = paste(res.back(), n);
        }
        continue;
      }
      int p = param_index(m, t);
      if (p >= 0) {
        bool before_paste = i + 1 < b.size() && b[i + 1].is("##");
        if (before_paste) {
          res.insert(res.end(), args[p].begin(), args[p].end());
        } else {
          if (!done[p]) { expanded[p] = expand_list(args[p]); done[p] = true; }
          for (size_t k = 0; k < expanded[p].size(); k++) {
            Token a = expanded[p][k];
            if (k == 0) a.space = t.space;
            res.push_back(std::move(a));
          }
        }
        continue;
      }
      res.push_back(t);
    }
    // Every produced token hides the macro (and what its invocation already hid).
    for (auto& t : res) {
      auto s = std::make_shared<std::set<std::string>>();
      if (t.hideset) for (auto& n : *t.hideset) if (!n.empty()) s->insert(n);
      if (hs) s->insert(hs->begin(), hs->end());
      t.hideset = s;
      t.loc = at;
      t.bol = false;
    }
    return res;
  }

  // Expands `t` if it names a macro, pushing the result back onto `src`.
  template <class Src>
  bool try_expand(const Token& t, Src& src) {
    if (!is_name(t)) return false;
    if (t.text == "__LINE__") {
      Token n = t;
      n.kind = Tk::num;
      n.text = std::to_string(t.loc.line);
      src.push_front(n);
      return true;
    }
    auto it = macros.find(t.text);
    if (it == macros.end() || hidden(t, t.text)) return false;
    const Macro& m = it->second;
    std::vector<Token> res;
    if (!m.function_like) {
      res = substitute(m, {}, with(t.hideset, t.text), t.loc);
    } else {
      std::vector<std::vector<Token>> args;
      Token rparen;
      if (!read_args(src, m, t, args, rparen)) return false;
      res = substitute(m, args, with(t.hideset, t.text), t.loc);
    }
    if (!res.empty()) res[0].space = t.space;
    count(res.size());
    src.insert(src.begin(), res.begin(), res.end());
    return true;
  }

  // ---- #if ----------------------------------------------------------------------------

  struct CondExpr {
    std::vector<Token> t;
    size_t i = 0;
    Loc at;
    const Token& peek() {
      static Token end;
      return i < t.size() ? t[i] : end;
    }
    bool accept(const char* s) {
      if (i < t.size() && t[i].kind == Tk::punct && t[i].text == s) { i++; return true; }
      return false;
    }
    int64_t primary() {
      if (accept("(")) {
        int64_t v = expr();
        if (!accept(")")) error_at(i < t.size() ? t[i].loc : at, "missing ')' in expression");
        return v;
      }
      if (accept("!")) return !primary();
      if (accept("-")) return -primary();
      if (accept("+")) return primary();
      if (accept("~")) return ~primary();
      if (i >= t.size()) error_at(at, "#if with no expression");
      const Token& k = t[i++];
      if (k.kind == Tk::num) {
        std::string s = k.text;
        while (!s.empty() && strchr("uUlL", s.back())) s.pop_back();
        try {
          return (int64_t)std::stoull(s, nullptr, 0);
        } catch (...) {
          error_at(k.loc, "invalid integer constant \"" + k.text + "\" in #if");
        }
      }
      if (k.kind == Tk::chr) return k.text.size() >= 3 ? (unsigned char)k.text[1] : 0;
      if (is_name(k)) return 0;  // identifiers left after expansion are 0
      error_at(k.loc, "token \"" + k.text + "\" is not valid in preprocessor expressions");
    }
    int64_t binary(int prec) {
      static const std::vector<std::vector<const char*>> levels = {
          {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
      if (prec == (int)levels.size()) return primary();
      int64_t v = binary(prec + 1);
      while (true) {
        const char* op = nullptr;
        for (const char* o : levels[prec])
          if (i < t.size() && t[i].kind == Tk::punct && t[i].text == o) op = o;
        if (!op) return v;
        Loc l = t[i].loc;
        i++;
        int64_t r = binary(prec + 1);
        std::string o = op;
        if (o == "||") v = v || r;
        else if (o == "&&") v = v && r;
        else if (o == "|") v |= r;
        else if (o == "^") v ^= r;
        else if (o == "&") v &= r;
        else if (o == "==") v = v == r;
        else if (o == "!=") v = v != r;
        else if (o == "<") v = v < r;
        else if (o == "<=") v = v <= r;
        else if (o == ">") v = v > r;
        else if (o == ">=") v = v >= r;
        else if (o == "<<") v = (r >= 0 && r < 64) ? (int64_t)((uint64_t)v << r) : 0;
        else if (o == ">>") v = (r >= 0 && r < 64) ? v >> r : 0;
        else if (o == "+") v = (int64_t)((uint64_t)v + (uint64_t)r);
        else if (o == "-") v = (int64_t)((uint64_t)v - (uint64_t)r);
        else if (o == "*") v = (int64_t)((uint64_t)v * (uint64_t)r);
        else if (o == "/" || o == "%") {
          if (r == 0) error_at(l, "division by zero in #if");
          if (v == INT64_MIN && r == -1) v = o == "/" ? v : 0;
          else v = o == "/" ? v / r : v % r;
        }
      }
    }
    int64_t expr() {
      int64_t c = binary(0);
      if (accept("?")) {
        int64_t a = expr();
        if (!accept(":")) error_at(at, "expected ':' in #if expression");
        int64_t b = expr();
        return c ? a : b;
      }
      return c;
    }
  };

  bool eval_if(std::vector<Token> l, Loc at) {
    // "defined X" and "defined(X)" first: their operands must not expand.
    std::vector<Token> v;
    for (size_t i = 0; i < l.size(); i++) {
      if (l[i].is("defined")) {
        bool paren = i + 1 < l.size() && l[i + 1].is("(");
        size_t n = i + (paren ? 2 : 1);
        if (n >= l.size() || !is_name(l[n])) error_at(l[i].loc, "operator \"defined\" requires an identifier");
        if (paren && (n + 1 >= l.size() || !l[n + 1].is(")"))) error_at(l[i].loc, "missing ')' after \"defined\"");
        Token r = l[i];
        r.kind = Tk::num;
        r.text = macros.count(l[n].text) ? "1" : "0";
        v.push_back(r);
        i = n + (paren ? 1 : 0);
        continue;
      }
      v.push_back(l[i]);
    }
    CondExpr ce{expand_list(v), 0, at};
    if (ce.t.empty()) error_at(at, "#if with no expression");
    int64_t r = ce.expr();
    if (ce.i != ce.t.size()) error_at(ce.t[ce.i].loc, "missing binary operator before token \"" + ce.t[ce.i].text + "\"");
    return r != 0;
  }

  // ---- directives ---------------------------------------------------------------------

  void include(const std::vector<Token>& l, Loc at) {
    std::string name;
    Loc nloc = at;
    if (!l.empty() && l[0].kind == Tk::str) {
      name = l[0].text.substr(1, l[0].text.size() - 2);
      nloc = l[0].loc;
    } else if (!l.empty() && l[0].is("<")) {
      nloc = l[0].loc;
      size_t i = 1;
      for (; i < l.size() && !l[i].is(">"); i++) name += l[i].text;
      if (i >= l.size()) error_at(at, "missing terminating > character");
    } else {
      error_at(at, "#include expects \"FILENAME\" or <FILENAME>");
    }
    const char* text = builtin_header(name);
    // A header of the system's that ours do not cover: gcc compiles the kernel (and says
    // "No such file or directory" where the system has none either).
    if (!text) unsupported_at(nloc, "<" + name + "> is not among the front end's headers");
    if (included.count(name)) return;  // every header has a guard
    included.insert(name);
    if (++include_depth > kMaxIncludeDepth) error_at(at, "#include nested too deeply");
    static std::map<std::string, std::string> names;  // Loc.file must outlive the compile
    static std::mutex mu;
    const char* file;
    {
      std::lock_guard<std::mutex> g(mu);
      file = names.emplace(name, "<" + name + ">").first->second.c_str();
    }
    std::vector<Token> toks = tokenize(text, file);
    toks.pop_back();  // its eof
    for (auto& t : toks) t.hideset = nullptr;
    if (!toks.empty()) toks[0].bol = true;
    if (!in.empty()) in.front().bol = true;
    in.insert(in.begin(), toks.begin(), toks.end());
    include_depth--;  // textual: depth only guards recursion through the queue
  }

  void pragma(std::vector<Token> l, Loc at) {
    Token p;
    p.kind = Tk::pragma;
    p.loc = at;
    p.text = "#pragma";
    if (!l.empty() && l[0].is("omp")) {
      std::vector<Token> rest(l.begin() + 1, l.end());
      rest = expand_list(rest);
      l.resize(1);
      l.insert(l.end(), rest.begin(), rest.end());
    }
    if (!l.empty() && l[0].is("once")) return;
    p.pragma = std::move(l);
    out.push_back(std::move(p));
  }

  void directive(const Token& hash) {
    if (in.empty() || in.front().bol || in.front().kind == Tk::eof) return;  // null directive
    Token d = take();
    std::vector<Token> l = line();
    std::string name = d.text;
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      bool v = false;
      if (taking()) {
        if (name == "if") v = eval_if(l, d.loc);
        else {
          if (l.empty() || !is_name(l[0])) error_at(d.loc, "no macro name given in #" + name + " directive");
          v = macros.count(l[0].text) == (name == "ifdef" ? 1u : 0u);
        }
      }
      conds.push_back({taking() && v, v, taking(), false, hash.loc});
      return;
    }
    if (name == "elif") {
      if (conds.empty()) error_at(hash.loc, "#elif without #if");
      Cond& c = conds.back();
      if (c.seen_else) error_at(hash.loc, "#elif after #else");
      bool v = c.parent_taking && !c.any_taken && eval_if(l, d.loc);
      c.taking = v;
      c.any_taken |= v;
      return;
    }
    if (name == "else") {
      if (conds.empty()) error_at(hash.loc, "#else without #if");
      Cond& c = conds.back();
      if (c.seen_else) error_at(hash.loc, "#else after #else");
      c.seen_else = true;
      c.taking = c.parent_taking && !c.any_taken;
      c.any_taken = true;
      return;
    }
    if (name == "endif") {
      if (conds.empty()) error_at(hash.loc, "#endif without #if");
      conds.pop_back();
      return;
    }
    if (!taking()) return;
    if (name == "define") return define(l, d.loc);
    if (name == "undef") {
      if (l.empty() || !is_name(l[0])) error_at(d.loc, "no macro name given in #undef directive");
      macros.erase(l[0].text);
      return;
    }
    if (name == "include") return include(l, d.loc);
    if (name == "pragma") return pragma(l, hash.loc);
    if (name == "error") {
      std::string msg;
      for (auto& t : l) msg += (msg.empty() ? "" : " ") + t.text;
      error_at(hash.loc, "#error " + msg);
    }
    if (name == "warning" || name == "line" || name == "ident") return;
    error_at(d.loc, "invalid preprocessing directive #" + name);
  }

  void run() {
    while (!in.empty()) {
      if (in.front().kind == Tk::eof) {
        if (!conds.empty()) error_at(conds.back().loc, "unterminated #if");
        out.push_back(take());
        return;
      }
      Token t = take();
      if (t.is("#") && t.bol && !t.hideset) {
        directive(t);
        continue;
      }
      if (!taking()) continue;
      if (t.is("_Pragma")) error_at(t.loc, "_Pragma is not supported; write #pragma");
      if (try_expand(t, in)) continue;
      count(1);
      out.push_back(std::move(t));
    }
  }
};

}  // namespace

std::vector<Token> preprocess(std::vector<Token> toks, const PreprocessOptions& opts) {
  Preprocessor pp;
  std::string predefined;
  for (auto& [k, v] : opts.defines) predefined += "#define " + k + " " + v + "\n";
  std::vector<Token> pre = tokenize(predefined, "<command-line>");
  pre.pop_back();
  pp.in.assign(pre.begin(), pre.end());
  pp.in.insert(pp.in.end(), toks.begin(), toks.end());
  pp.run();
  return std::move(pp.out);
}

}  // namespace kernelc
