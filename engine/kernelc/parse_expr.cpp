// Pass 3c: expressions, by precedence climbing. Typing happens as nodes are built
// (check.cpp), so an ill-typed expression is reported where it is written.
#include <cmath>
#include <cstring>

#include "kernelc/parser.hpp"

namespace kernelc {

// expr = assign ("," assign)*
Node* Parser::expr() {
  Node* n = assign();
  while (equal(",")) {
    Loc l = loc();
    pos++;
    Node* c = new_node(Nd::comma, l);
    c->lhs = n;
    c->rhs = rvalue(assign());
    c->ty = c->rhs->ty;
    n = c;
  }
  return n;
}

// assign = conditional (("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^="
//                       | "<<=" | ">>=") assign)?
Node* Parser::assign() {
  Nest nest(*this);
  Node* n = conditional();
  static const std::pair<const char*, Nd> ops[] = {{"+=", Nd::add}, {"-=", Nd::sub}, {"*=", Nd::mul},
      {"/=", Nd::div}, {"%=", Nd::mod}, {"&=", Nd::band}, {"|=", Nd::bor}, {"^=", Nd::bxor},
      {"<<=", Nd::shl}, {">>=", Nd::shr}};
  Loc l = loc();
  if (consume("=")) return new_assign(n, assign(), l);
  for (auto& [s, k] : ops)
    if (consume(s)) return new_op_assign(k, n, assign(), l);
  return n;
}

// conditional = binary ("?" expr ":" conditional)?
Node* Parser::conditional() {
  Node* c = binary(0);
  if (!equal("?")) return c;
  Loc l = loc();
  pos++;
  Node* a = expr();
  skip(":");
  Node* b = conditional();
  return new_cond(c, a, b, l);
}

struct BinOp {
  const char* s;
  Nd k;
  int prec;
};
static const BinOp kBinOps[] = {
    {"||", Nd::lor, 0}, {"&&", Nd::land, 1}, {"|", Nd::bor, 2}, {"^", Nd::bxor, 3},
    {"&", Nd::band, 4}, {"==", Nd::eq, 5}, {"!=", Nd::ne, 5}, {"<", Nd::lt, 6},
    {"<=", Nd::le, 6}, {">", Nd::lt, 6}, {">=", Nd::le, 6}, {"<<", Nd::shl, 7},
    {">>", Nd::shr, 7}, {"+", Nd::add, 8}, {"-", Nd::sub, 8}, {"*", Nd::mul, 9},
    {"/", Nd::div, 9}, {"%", Nd::mod, 9}};

// binary(p) = binary(p + 1) (op(p) binary(p + 1))*   for p = 0 ("||") .. 9 ("*" "/" "%"),
// the levels of kBinOps; binary(10) = cast
Node* Parser::binary(int prec) {
  if (prec > 9) return cast();
  Node* n = binary(prec + 1);
  while (true) {
    const BinOp* op = nullptr;
    if (tok().kind == Tk::punct)
      for (auto& o : kBinOps)
        if (o.prec == prec && tok().text == o.s) op = &o;
    if (!op) return n;
    Loc l = loc();
    pos++;
    Node* r = binary(prec + 1);
    std::string s = op->s;
    if (s == ">" || s == ">=") n = new_compare(op->k, r, n, l);  // a > b is b < a
    else if (op->k == Nd::lt || op->k == Nd::le || op->k == Nd::eq || op->k == Nd::ne) n = new_compare(op->k, n, r, l);
    else if (op->k == Nd::land || op->k == Nd::lor) n = new_logical(op->k, n, r, l);
    else if (op->k == Nd::add) n = new_add(n, r, l);
    else if (op->k == Nd::sub) n = new_sub(n, r, l);
    else n = new_binary(op->k, n, r, l);
  }
}

// compound-literal = "(" typename ")" initializer   (the "(" typename ")" already read)
Node* Parser::compound_literal(Type* ty, Loc l) {
  if (ty->kind == Ty::vector) {
    Node* n = new_node(Nd::vec_lit, l);
    n->ty = ty;
    skip("{");
    while (!consume("}")) {
      if ((int64_t)n->args.size() >= ty->len) error_at(loc(), "excess elements in vector initializer");
      n->args.push_back(convert(assign(), ty->base, "initializing"));
      if (!consume(",")) {
        skip("}");
        break;
      }
    }
    Node* zero = new_cast(new_num(0, ty_int, l), ty->base);
    while ((int64_t)n->args.size() < ty->len) n->args.push_back(zero);
    return n;
  }
  if (!current_fn) unsupported_at(l, "compound literals at file scope");
  if (ty->kind == Ty::array && ty->len == -2) error_at(l, "compound literal has variable size");
  Node* n = new_node(Nd::compound_lit, l);
  Obj* tmp = new_obj("", ty, l);
  tmp->is_local = true;
  Type* nt;
  n->init_list = initializer(ty, &nt);
  tmp->ty = nt;
  n->var = tmp;
  n->ty = nt;
  return n;
}

// cast = "(" typename ")" (cast | compound-literal)
//      | unary
Node* Parser::cast() {
  Nest nest(*this);
  bool paren = equal("(");
  if (paren) pos++;
  if (paren && is_typename()) {
    Loc l = toks[pos - 1].loc;
    Type* ty = typename_();
    skip(")");
    if (equal("{")) return compound_literal(ty, l);
    Node* e = rvalue(cast());
    if (ty->kind == Ty::void_) {
      Node* n = new_node(Nd::cast, l);
      n->lhs = e;
      n->ty = ty_void;
      return n;
    }
    if (ty->kind == Ty::array || ty->kind == Ty::func) error_at(l, "cast specifies " + std::string(ty->kind == Ty::array ? "array" : "function") + " type");
    if (ty->kind == Ty::struct_ || ty->kind == Ty::union_) error_at(l, "conversion to non-scalar type requested");
    if (ty->kind == Ty::vector || e->ty->kind == Ty::vector) {
      if (ty->size != e->ty->size) error_at(l, "cannot convert a value of type '" + type_name(e->ty) + "' to type '" + type_name(ty) + "' which has different size");
    } else if (!is_scalar(e->ty)) {
      error_at(l, "conversion to '" + type_name(ty) + "' from '" + type_name(e->ty) + "' is invalid");
    } else if (is_flonum(ty) && e->ty->kind == Ty::ptr) {
      error_at(l, "pointer value used where a floating-point was expected");
    } else if (ty->kind == Ty::ptr && is_flonum(e->ty)) {
      error_at(l, "cannot convert to a pointer type");
    }
    Node* n = new_node(Nd::cast, l);
    n->lhs = e;
    n->ty = unqual(ty);
    return n;
  }
  if (paren) pos--;  // not a cast after all: step back onto the '('
  return unary();
}

// unary = ("+" | "-" | "!" | "~" | "&" | "*") cast
//       | ("++" | "--") unary
//       | ("sizeof" | "_Alignof") ("(" typename ")" | unary)
//       | postfix
Node* Parser::unary() {
  Loc l = loc();
  if (consume("+")) {
    Node* e = rvalue(cast());
    if (!is_arith(e->ty) && e->ty->kind != Ty::vector) error_at(l, "wrong type argument to unary plus");
    return is_arith(e->ty) ? new_cast(e, promote(e->ty)) : e;
  }
  if (consume("-")) return new_unary(Nd::neg, cast(), l);
  if (consume("!")) return new_unary(Nd::lnot, cast(), l);
  if (consume("~")) return new_unary(Nd::bnot, cast(), l);
  if (consume("&")) return new_addr(cast(), l);
  if (consume("*")) return new_deref(cast(), l);
  if (consume("++")) return new_incdec(Nd::pre_inc, unary(), l);
  if (consume("--")) return new_incdec(Nd::pre_dec, unary(), l);
  if (equal("&&")) unsupported_at(l, "labels as values");
  if (consume("sizeof") || consume("_Alignof") || consume("__alignof__")) {
    bool is_size = toks[pos - 1].is("sizeof");
    Type* t;
    if (equal("(") && (pos++, is_typename())) {
      t = typename_();
      skip(")");
      if (equal("{")) t = compound_literal(t, l)->ty;
    } else {
      if (toks[pos - 1].is("(")) pos--;
      Node* e = unary();
      t = e->ty;
    }
    if (t->kind == Ty::func || t->kind == Ty::void_) error_at(l, "invalid application of 'sizeof' to " + std::string(t->kind == Ty::void_ ? "a void type" : "a function type"));
    if ((t->kind == Ty::struct_ || t->kind == Ty::union_) && !t->complete && !(t->origin && t->origin->complete))
      error_at(l, "invalid application of 'sizeof' to incomplete type '" + type_name(t) + "'");
    if (t->kind == Ty::array && t->len == -2) unsupported_at(l, "sizeof of a variable-length array");
    if (t->kind == Ty::array && t->len < 0) error_at(l, "invalid application of 'sizeof' to incomplete type");
    Type* st = t->origin && t->kind != Ty::array ? t->origin : t;
    return new_num(is_size ? st->size : st->align, ty_ulong, l);
  }
  return postfix();
}

// func-args = (assign ("," assign)*)? ")"   (the "(" already read)
std::vector<Node*> Parser::func_args(Loc l) {
  std::vector<Node*> args;
  (void)l;
  if (consume(")")) return args;
  while (true) {
    args.push_back(assign());
    if (consume(")")) return args;
    skip(",");
  }
}

// postfix = primary ("[" expr "]" | ("." | "->") ident | "++" | "--")*
Node* Parser::postfix() {
  Node* n = primary();
  while (true) {
    Loc l = loc();
    if (consume("[")) {
      Node* i = expr();
      skip("]");
      n = new_index(n, i, l);
      continue;
    }
    if (consume(".") || consume("->")) {
      bool arrow = toks[pos - 1].is("->");
      if (tok().kind != Tk::ident) expected("identifier");
      Token name = tok();
      pos++;
      n = new_member(n, name, arrow, l);
      continue;
    }
    if (consume("++")) { n = new_incdec(Nd::post_inc, n, l); continue; }
    if (consume("--")) { n = new_incdec(Nd::post_dec, n, l); continue; }
    if (equal("(")) {
      if (n->kind == Nd::func_ref) unsupported_at(l, "calls through parenthesized function designators");
      error_at(l, "called object is not a function or function pointer");
    }
    return n;
  }
}

static int64_t char_value(const std::string& s, Loc l) {
  // s includes the quotes
  if (s.size() < 3) error_at(l, "empty character constant");
  const char* p = s.c_str() + 1;
  if (*p != '\\') return (signed char)*p;
  p++;
  switch (*p) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': return (signed char)strtol(p, nullptr, 8);
    case 'x': return (signed char)strtol(p + 1, nullptr, 16);
    case 'a': return 7;
    case 'b': return 8;
    case 'f': return 12;
    case 'v': return 11;
    case 'e': return 27;
    default: return *p;
  }
}

// number = an integer or floating constant with its suffix (u, l, ll, f, ...)
Node* Parser::number(const Token& t) {
  const std::string& s = t.text;
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  bool is_float = !hex && (s.find_first_of(".eE") != std::string::npos);
  if (hex && s.find_first_of("pP") != std::string::npos) is_float = true;
  if (is_float) {
    char* end;
    double v = strtod(s.c_str(), &end);
    std::string suffix = end;
    Node* n = new_node(Nd::fnum, t.loc);
    n->fval = v;
    if (suffix == "f" || suffix == "F") n->ty = ty_float, n->fval = (float)v;
    else if (suffix == "l" || suffix == "L") n->ty = ty_ldouble;
    else if (suffix.empty()) n->ty = ty_double;
    else error_at(t.loc, "invalid suffix \"" + suffix + "\" on floating constant");
    return n;
  }
  const char* p = s.c_str();
  int base = 10;
  if (hex) { base = 16; p += 2; }
  else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) { base = 2; p += 2; }
  else if (s.size() > 1 && s[0] == '0') { base = 8; p += 1; }
  errno = 0;
  char* end;
  uint64_t v = strtoull(p, &end, base);
  if (errno == ERANGE) error_at(t.loc, "integer constant is too large for its type");
  if (end == p && base != 8) error_at(t.loc, "invalid integer constant \"" + s + "\"");
  std::string suffix = end;
  for (auto& ch : suffix) ch = (char)tolower(ch);
  bool u = suffix.find('u') != std::string::npos;
  int longs = (int)std::count(suffix.begin(), suffix.end(), 'l');
  std::string rest = suffix;
  rest.erase(std::remove(rest.begin(), rest.end(), 'u'), rest.end());
  rest.erase(std::remove(rest.begin(), rest.end(), 'l'), rest.end());
  if (!rest.empty() || suffix.find("lul") != std::string::npos || std::count(suffix.begin(), suffix.end(), 'u') > 1 || longs > 2)
    error_at(t.loc, "invalid suffix \"" + std::string(end) + "\" on integer constant");
  Type* ty;
  if (longs >= 1) ty = u ? (longs == 2 ? ty_ullong : ty_ulong) : (v >> 63 && base != 10 ? ty_ulong : (longs == 2 ? ty_llong : ty_long));
  else if (u) ty = v >> 32 ? ty_ulong : ty_uint;
  else if (base == 10) ty = v >> 31 ? ty_long : ty_int;
  else ty = v >> 63 ? ty_ulong : v >> 32 ? ty_long : v >> 31 ? ty_uint : ty_int;
  return new_num((int64_t)v, ty, t.loc);
}

// builtin-call = "__builtin_" ident "(" func-args   (the builtins kernels use)
Node* Parser::builtin_call(Token name) {
  Loc l = name.loc;
  std::string n = name.text;
  if (n == "__builtin_offsetof") {
    skip("(");
    Type* t = typename_();
    skip(",");
    if (tok().kind != Tk::ident) expected("member name");
    Token m = tok();
    pos++;
    skip(")");
    Type* st = t->origin ? t->origin : t;
    if (st->kind != Ty::struct_ && st->kind != Ty::union_) error_at(l, "offsetof of a non-structure type");
    for (Member* mem : st->members)
      if (mem->name == m.text) return new_num(mem->offset, ty_ulong, l);
    error_at(m.loc, "'" + type_name(st) + "' has no member named '" + m.text + "'");
  }
  skip("(");
  std::vector<Node*> args = func_args(l);
  auto want = [&](size_t lo, size_t hi) {
    if (args.size() < lo) error_at(l, "too few arguments to function '" + n + "'");
    if (args.size() > hi) error_at(l, "too many arguments to function '" + n + "'");
  };
  Node* c = new_node(Nd::call, l);
  c->str = n;
  if (n == "__builtin_prefetch") {
    want(1, 3);
    Node* p = rvalue(args[0]);
    if (p->ty->kind != Ty::ptr) error_at(p->loc, "passing argument 1 of '__builtin_prefetch' makes pointer from integer");
    c->args.push_back(new_cast(p, pointer_to(qualified(ty_void, true))));
    for (size_t i = 1; i < 3; i++) {
      int64_t v = i == 1 ? 0 : 3;
      if (i < args.size()) {
        Node* a = rvalue(args[i]);
        if (!is_integer(a->ty) || !is_constant(a)) error_at(a->loc, "argument " + std::to_string(i + 1) + " of '__builtin_prefetch' must be a constant");
        v = eval(a);
      }
      if (i == 1 && (v < 0 || v > 1)) error_at(l, "invalid second argument to '__builtin_prefetch'; using zero");
      if (i == 2 && (v < 0 || v > 3)) error_at(l, "invalid third argument to '__builtin_prefetch'; using zero");
      c->args.push_back(new_num(v, ty_int, l));
    }
    c->ty = ty_void;
    return c;
  }
  if (n == "__builtin_expect") {
    want(2, 2);
    return new_cast(rvalue(args[0]), ty_long);
  }
  if (n == "__builtin_assume_aligned") {
    want(2, 3);
    Node* p = rvalue(args[0]);
    if (p->ty->kind != Ty::ptr) error_at(p->loc, "argument 1 of '__builtin_assume_aligned' must be a pointer");
    return new_cast(p, pointer_to(ty_void));
  }
  if (n == "__builtin_unreachable" || n == "__builtin_trap") {
    want(0, 0);
    c->ty = ty_void;
    return c;
  }
  if (n == "__builtin_huge_val" || n == "__builtin_inf" || n == "__builtin_inff" || n == "__builtin_huge_valf") {
    want(0, 0);
    Node* f = new_node(Nd::fnum, l);
    f->fval = HUGE_VAL;
    f->ty = n.back() == 'f' ? ty_float : ty_double;
    return f;
  }
  if (n == "__builtin_nan" || n == "__builtin_nanf") {
    want(1, 1);
    Node* f = new_node(Nd::fnum, l);
    f->fval = NAN;
    f->ty = n.back() == 'f' ? ty_float : ty_double;
    return f;
  }
  // math builtins: the same as the library names, typed by the prelude's declaration
  static const std::set<std::string> math = {"sqrt", "fabs", "fma", "fmin", "fmax", "sqrtf", "fabsf", "exp", "log", "pow", "floor", "ceil", "copysign"};
  std::string base = n.substr(strlen("__builtin_"));
  if (math.count(base)) {
    VarScope* s = nullptr;
    for (auto& sc : scopes) {
      auto f = sc.vars.find(base);
      if (f != sc.vars.end() && f->second.var && f->second.var->from_prelude) s = &f->second;
    }
    if (s) return new_call(s->var, args, l);
  }
  unsupported_at(l, "'" + n + "'");
}

// call = ident "(" func-args   (an undeclared ident is declared implicitly, as gcc 12 does)
Node* Parser::call(Token name) {
  Loc l = name.loc;
  VarScope* s = find(name.text);
  if (!s || (!s->var && !s->type_def && !s->is_enum)) {
    if (name.text.rfind("__builtin_", 0) == 0) return builtin_call(name);
    // An undeclared function: gcc 12 declares it implicitly (with a warning); the
    // allow-list check then names it.
    Obj* fn = new_obj(name.text, func_type(ty_int), l);
    fn->ty->old_style = true;
    fn->is_function = true;
    fn->implicit = true;
    scopes.front().vars[name.text].var = fn;
    prog.globals.push_back(fn);
    skip("(");
    return new_call(fn, func_args(l), l);
  }
  if (!s->var || !s->var->is_function) {
    if (s->var && s->var->ty->kind == Ty::ptr && s->var->ty->base->kind == Ty::func) unsupported_at(l, "calls through function pointers");
    error_at(l, "called object '" + name.text + "' is not a function or function pointer");
  }
  skip("(");
  return new_call(s->var, func_args(l), l);
}

// primary = "(" expr ")" | number | char | string+ | call | ident
Node* Parser::primary() {
  Nest nest(*this);
  const Token& t = tok();
  Loc l = t.loc;
  if (consume("(")) {
    if (equal("{")) unsupported_at(l, "statement expressions");
    Node* n = expr();
    skip(")");
    return n;
  }
  if (t.kind == Tk::num) {
    Token c = t;
    pos++;
    return number(c);
  }
  if (t.kind == Tk::chr) {
    int64_t v = char_value(t.text, l);
    pos++;
    return new_num(v, ty_int, l);
  }
  if (t.kind == Tk::str) {
    std::string bytes;
    while (tok().kind == Tk::str) {
      const std::string& s = tok().text;
      for (size_t i = 1; i + 1 < s.size(); i++) {
        if (s[i] == '\\' && i + 2 < s.size()) {
          std::string one = "'" + s.substr(i, 2) + "'";
          bytes += (char)char_value(one, l);
          i++;
        } else {
          bytes += s[i];
        }
      }
      pos++;
    }
    Node* n = new_node(Nd::str, l);
    n->str = bytes;
    n->ty = array_of(ty_char, (int64_t)bytes.size() + 1);
    return n;
  }
  if (t.kind == Tk::ident) {
    Token name = t;
    pos++;
    if (equal("(")) return call(name);
    VarScope* s = find(name.text);
    if (s && s->is_enum) return new_num(s->enum_val, ty_int, l);
    if (!s || !s->var) {
      if (s && s->type_def) error_at(l, "expected expression before '" + name.text + "'");
      error_at(l, "'" + name.text + "' undeclared" + std::string(current_fn ? " (first use in this function)" : " here (not in a function)"));
    }
    return new_var(s->var, l);
  }
  if (t.kind == Tk::eof) error_at(l, "expected expression at end of input");
  error_at(l, "expected expression before '" + t.text + "' token");
}

}  // namespace kernelc
