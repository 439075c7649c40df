// Pass 3a: declarations and the program. Recursive descent over the preprocessed
// tokens; the prelude's declarations sit in an outer scope that the kernel may shadow.
// One file over 600 lines: declarations, declarators and initialisers are one
// recursive grammar (C's declarator syntax) and read best in one place.
#include "kernelc/parser.hpp"

namespace kernelc {

constexpr int kMaxDepth = 200;

Parser::Nest::Nest(Parser& p) : p(p) {
  if (++p.depth > kMaxDepth) error_at(p.loc(), "nesting is too deep");
}

Parser::Parser(std::vector<Token> t, Program& prog) : toks(std::move(t)), prog(prog) {
  ty_void = new_type(Ty::void_, 1, 1);
  ty_bool = new_type(Ty::bool_, 1, 1);
  ty_char = new_type(Ty::char_, 1, 1);
  ty_schar = new_type(Ty::schar, 1, 1);
  ty_uchar = new_type(Ty::uchar, 1, 1);
  ty_short = new_type(Ty::short_, 2, 2);
  ty_ushort = new_type(Ty::ushort, 2, 2);
  ty_int = new_type(Ty::int_, 4, 4);
  ty_uint = new_type(Ty::uint, 4, 4);
  ty_long = new_type(Ty::long_, 8, 8);
  ty_ulong = new_type(Ty::ulong, 8, 8);
  ty_llong = new_type(Ty::llong, 8, 8);
  ty_ullong = new_type(Ty::ullong, 8, 8);
  ty_float = new_type(Ty::float_, 4, 4);
  ty_double = new_type(Ty::double_, 8, 8);
  ty_ldouble = new_type(Ty::ldouble, 16, 16);
  if (toks.empty() || toks.back().kind != Tk::eof) toks.push_back(Token{});
}

void Parser::expected(const char* what) {
  const Token& t = tok();
  if (t.kind == Tk::eof) error_at(t.loc, std::string("expected ") + what + " at end of input");
  error_at(t.loc, std::string("expected ") + what + " before '" + t.text + "'" + (t.kind == Tk::punct ? " token" : ""));
}

void Parser::skip(const char* s) {
  if (consume(s)) return;
  // gcc reports a missing ';' or ')' at the end of the previous token, where it belongs.
  if ((std::string(s) == ";" || std::string(s) == ")") && pos > 0 && tok().loc.line != toks[pos - 1].loc.line) {
    const Token& p = toks[pos - 1];
    Loc l = p.loc;
    l.col += (int)p.text.size();
    if (tok().kind == Tk::eof) error_at(l, std::string("expected '") + s + "' at end of input");
    error_at(l, std::string("expected '") + s + "' before '" + tok().text + "'" + (tok().kind == Tk::punct ? " token" : ""));
  }
  expected((std::string("'") + s + "'").c_str());
}

VarScope* Parser::find(const std::string& name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto f = it->vars.find(name);
    if (f != it->vars.end()) return &f->second;
  }
  return nullptr;
}

Type* Parser::find_tag(const std::string& name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto f = it->tags.find(name);
    if (f != it->tags.end()) return f->second;
  }
  return nullptr;
}

Obj* Parser::new_obj(const std::string& name, Type* ty, Loc l) {
  Obj& o = prog.objs.emplace_back();
  o.name = name;
  o.ty = ty;
  o.loc = l;
  o.id = next_id++;
  o.from_prelude = in_prelude;
  return &o;
}

// ---- declaration specifiers ---------------------------------------------------------

bool Parser::is_typename() const {
  static const std::set<std::string> kw = {
      "void", "_Bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
      "struct", "union", "enum", "typedef", "static", "extern", "inline", "const", "volatile",
      "restrict", "register", "auto", "_Alignas", "_Noreturn", "_Thread_local", "_Complex",
      "_Atomic", "__restrict", "__restrict__", "__inline", "__inline__", "__attribute__",
      "__const", "__volatile__", "__extension__", "__signed__", "__typeof__", "typeof"};
  const Token& t = tok();
  if (t.kind == Tk::keyword) return kw.count(t.text) > 0;
  if (t.kind == Tk::ident) {
    auto* self = const_cast<Parser*>(this);
    VarScope* s = self->find(t.text);
    return s && s->type_def;
  }
  return false;
}

// attributes = ("__attribute__" "(" "(" (attribute ("," attribute)*)? ")" ")")*
// attribute  = ident ("(" tokens ")")?   (aligned, vector_size and always_inline are read)
Attrs Parser::attributes() {
  Attrs a;
  while (equal("__attribute__")) {
    pos++;
    skip("(");
    skip("(");
    while (!equal(")")) {
      if (tok().kind != Tk::ident && tok().kind != Tk::keyword) expected("attribute name");
      std::string name = tok().text;
      Loc nloc = loc();
      pos++;
      if (name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__")
        name = name.substr(2, name.size() - 4);
      std::vector<Node*> args;
      if (consume("(")) {
        int d = 1;
        if (name == "aligned" || name == "vector_size") {
          args.push_back(conditional());
          skip(")");
        } else {
          while (d > 0 && tok().kind != Tk::eof) {
            if (equal("(")) d++;
            if (equal(")")) d--;
            pos++;
          }
        }
      }
      // Code run when the object is loaded: gcc compiles it, and the evaluation refuses it.
      if (name == "constructor" || name == "destructor")
        unsupported_at(nloc, "the '" + name + "' attribute");
      if (name == "aligned") {
        int64_t v = args.empty() ? 16 : eval(args[0]);
        if (v <= 0 || (v & (v - 1))) error_at(nloc, "requested alignment is not a positive power of 2");
        a.aligned = v;
      } else if (name == "vector_size") {
        if (args.empty()) error_at(nloc, "wrong number of arguments specified for 'vector_size' attribute");
        a.vector_size = eval(args[0]);
      } else if (name == "always_inline") {
        a.always_inline = true;
      }
      if (!consume(",")) break;
    }
    skip(")");
    skip(")");
  }
  return a;
}

// declspec = ("void" | "char" | "short" | "int" | "long" | "float" | "double" | "signed"
//             | "unsigned" | "_Bool" | struct-decl | enum-specifier | typedef-name
//             | "typedef" | "static" | "extern" | "inline" | "const" | "volatile"
//             | "restrict" | attributes)+
Type* Parser::declspec(DeclAttr* attr) {
  enum { VOID = 1 << 0, BOOL = 1 << 2, CHAR = 1 << 4, SHORT = 1 << 6, INT = 1 << 8, LONG = 1 << 10,
         FLOAT = 1 << 12, DOUBLE = 1 << 14, OTHER = 1 << 16, SIGNED = 1 << 17, UNSIGNED = 1 << 18 };
  Type* ty = ty_int;
  int counter = 0;
  bool is_const = false;
  Loc start = loc();
  while (is_typename()) {
    const Token& t = tok();
    Loc tl = t.loc;
    if (t.is("typedef") || t.is("static") || t.is("extern") || t.is("inline") || t.is("__inline") ||
        t.is("__inline__") || t.is("_Thread_local") || t.is("_Noreturn") || t.is("register") || t.is("auto")) {
      if (!attr) error_at(tl, "storage class specified for an unnamed declaration");
      if (t.is("typedef")) attr->storage = Storage::typedef_;
      else if (t.is("static")) attr->storage = Storage::static_;
      else if (t.is("extern")) attr->storage = Storage::extern_;
      else if (t.is("inline") || t.is("__inline") || t.is("__inline__")) attr->is_inline = true;
      else if (t.is("_Thread_local")) unsupported_at(tl, "thread-local storage");
      pos++;
      continue;
    }
    if (t.is("const") || t.is("__const")) { is_const = true; pos++; continue; }
    if (t.is("volatile") || t.is("__volatile__") || t.is("restrict") || t.is("__restrict") ||
        t.is("__restrict__") || t.is("__extension__")) { pos++; continue; }
    if (t.is("_Atomic")) unsupported_at(tl, "_Atomic types (use #pragma omp atomic)");
    if (t.is("_Complex")) unsupported_at(tl, "complex types");
    if (t.is("__typeof__") || t.is("typeof")) unsupported_at(tl, "typeof");
    if (t.is("__attribute__")) {
      Attrs a = attributes();
      if (attr) {
        attr->always_inline |= a.always_inline;
        if (a.aligned) attr->align = std::max(attr->align, a.aligned);
      }
      continue;
    }
    if (t.is("_Alignas")) {
      if (!attr) error_at(tl, "_Alignas is not allowed here");
      pos++;
      skip("(");
      int64_t v = is_typename() ? typename_()->align : const_expr();
      skip(")");
      if (v <= 0 || (v & (v - 1))) error_at(tl, "requested alignment is not a positive power of 2");
      attr->align = std::max(attr->align, v);
      continue;
    }
    if (t.is("struct") || t.is("union") || t.is("enum") || t.kind == Tk::ident) {
      if (counter) break;  // an identifier after a type specifier is the declarator's name
      if (t.is("struct")) { pos++; ty = struct_decl(false); }
      else if (t.is("union")) { pos++; ty = struct_decl(true); }
      else if (t.is("enum")) { pos++; ty = enum_specifier(); }
      else { ty = find(t.text)->type_def; pos++; }
      counter += OTHER;
      continue;
    }
    if (t.is("void")) counter += VOID;
    else if (t.is("_Bool")) counter += BOOL;
    else if (t.is("char")) counter += CHAR;
    else if (t.is("short")) counter += SHORT;
    else if (t.is("int")) counter += INT;
    else if (t.is("long")) counter += LONG;
    else if (t.is("float")) counter += FLOAT;
    else if (t.is("double")) counter += DOUBLE;
    else if (t.is("signed") || t.is("__signed__")) counter |= SIGNED;
    else if (t.is("unsigned")) counter |= UNSIGNED;
    else error_at(tl, "unexpected '" + t.text + "'");
    pos++;
    switch (counter) {
      case VOID: ty = ty_void; break;
      case BOOL: ty = ty_bool; break;
      case CHAR: ty = ty_char; break;
      case SIGNED + CHAR: ty = ty_schar; break;
      case UNSIGNED + CHAR: ty = ty_uchar; break;
      case SHORT: case SHORT + INT: case SIGNED + SHORT: case SIGNED + SHORT + INT: ty = ty_short; break;
      case UNSIGNED + SHORT: case UNSIGNED + SHORT + INT: ty = ty_ushort; break;
      case INT: case SIGNED: case SIGNED + INT: ty = ty_int; break;
      case UNSIGNED: case UNSIGNED + INT: ty = ty_uint; break;
      case LONG: case LONG + INT: case SIGNED + LONG: case SIGNED + LONG + INT: ty = ty_long; break;
      case LONG + LONG: case LONG + LONG + INT: case SIGNED + LONG + LONG: case SIGNED + LONG + LONG + INT: ty = ty_llong; break;
      case UNSIGNED + LONG: case UNSIGNED + LONG + INT: ty = ty_ulong; break;
      case UNSIGNED + LONG + LONG: case UNSIGNED + LONG + LONG + INT: ty = ty_ullong; break;
      case FLOAT: ty = ty_float; break;
      case DOUBLE: ty = ty_double; break;
      case LONG + DOUBLE: ty = ty_ldouble; break;
      default: error_at(tl, "two or more data types in declaration specifiers");
    }
  }
  (void)start;
  return is_const ? qualified(ty, true) : ty;
}

// struct-decl = ident? ("{" (declspec declarator ("," declarator)* ";")* "}")?
//   ("struct" or "union" already read)
Type* Parser::struct_decl(bool is_union) {
  Attrs pre = attributes();
  (void)pre;
  std::string tag;
  Loc tl = loc();
  if (tok().kind == Tk::ident) {
    tag = tok().text;
    pos++;
  }
  if (!tag.empty() && !equal("{")) {
    if (Type* t = find_tag(tag)) {
      if ((t->kind == Ty::union_) != is_union) error_at(tl, "'" + tag + "' defined as wrong kind of tag");
      return t;
    }
    Type* t = new_type(is_union ? Ty::union_ : Ty::struct_, 0, 1);
    t->tag = tag;
    t->complete = false;
    scopes.back().tags[tag] = t;
    return t;
  }
  skip("{");
  Type* t = nullptr;
  if (!tag.empty()) {
    auto f = scopes.back().tags.find(tag);
    if (f != scopes.back().tags.end() && !f->second->complete) t = f->second;
    else if (f != scopes.back().tags.end()) error_at(tl, "redefinition of '" + std::string(is_union ? "union " : "struct ") + tag + "'");
  }
  if (!t) t = new_type(is_union ? Ty::union_ : Ty::struct_, 0, 1);
  t->tag = tag;
  if (!tag.empty()) scopes.back().tags[tag] = t;
  int64_t offset = 0, size = 0, align = 1;
  std::set<std::string> names;
  while (!consume("}")) {
    DeclAttr attr;
    Type* base = declspec(&attr);
    bool first = true;
    while (!consume(";")) {
      if (!first) skip(",");
      first = false;
      std::string name;
      Loc nl = loc();
      Type* mt = declarator(base, &name, &nl);
      Attrs a = attributes();
      if (equal(":")) unsupported_at(loc(), "bit-fields");
      if (mt->kind == Ty::func) error_at(nl, "field '" + name + "' declared as a function");
      if (mt->kind == Ty::array && mt->len < 0) unsupported_at(nl, "flexible array members");
      if ((mt->kind == Ty::struct_ || mt->kind == Ty::union_) && !mt->complete) error_at(nl, "field '" + name + "' has incomplete type");
      if (mt->kind == Ty::void_) error_at(nl, "field '" + name + "' declared void");
      int64_t al = std::max(mt->align, std::max(a.aligned, attr.align));
      if (name.empty()) unsupported_at(nl, "anonymous members");
      if (!names.insert(name).second) error_at(nl, "duplicate member '" + name + "'");
      Member& m = prog.members.emplace_back();
      m.ty = mt;
      m.name = name;
      m.loc = nl;
      if (is_union) {
        m.offset = 0;
        size = std::max(size, mt->size);
      } else {
        offset = (offset + al - 1) / al * al;
        m.offset = offset;
        offset += mt->size;
        size = offset;
      }
      align = std::max(align, al);
      t->members.push_back(&m);
    }
  }
  attributes();
  if (t->members.empty()) error_at(tl, "struct has no members");
  t->size = (size + align - 1) / align * align;
  t->align = align;
  t->complete = true;
  return t;
}

// enum-specifier = ident? "{" ident ("=" const-expr)? ("," ident ("=" const-expr)?)* ","? "}"
//                | ident
Type* Parser::enum_specifier() {
  Type* t = new_type(Ty::enum_, 4, 4);
  Loc tl = loc();
  if (tok().kind == Tk::ident) {
    t->tag = tok().text;
    pos++;
    if (!equal("{")) {
      Type* f = find_tag(t->tag);
      if (!f) error_at(tl, "use of undeclared enum '" + t->tag + "'");
      return f;
    }
  }
  skip("{");
  int64_t v = 0;
  while (!consume("}")) {
    if (tok().kind != Tk::ident) expected("identifier");
    std::string name = tok().text;
    Loc nl = loc();
    pos++;
    if (consume("=")) v = const_expr();
    if (scopes.back().vars.count(name)) error_at(nl, "redeclaration of '" + name + "'");
    VarScope& s = declare(name);
    s.is_enum = true;
    s.enum_val = v++;
    if (!consume(",")) {
      skip("}");
      break;
    }
  }
  if (!t->tag.empty()) scopes.back().tags[t->tag] = t;
  return t;
}

// ---- declarators --------------------------------------------------------------------

// declarator = ("*" ("const" | "volatile" | "restrict" | attributes)*)* attributes?
//              ("(" declarator ")" | ident?) type-suffix
Type* Parser::declarator(Type* ty, std::string* name, Loc* name_loc, std::vector<Obj*>* params) {
  Nest n(*this);
  while (consume("*")) {
    ty = pointer_to(ty);
    while (equal("const") || equal("volatile") || equal("restrict") || equal("__restrict") ||
           equal("__restrict__") || equal("__const") || equal("__attribute__")) {
      if (equal("__attribute__")) { attributes(); continue; }
      if (equal("const") || equal("__const")) ty = qualified(ty, true);
      pos++;
    }
  }
  if (equal("__attribute__")) attributes();
  if (equal("(") && !(peek(1).kind == Tk::ident && find(peek(1).text) && find(peek(1).text)->type_def) && !peek(1).is(")") && !peek(1).is("void")) {
    // a parenthesized declarator: parse it against a placeholder, then patch
    size_t start = pos;
    pos++;
    std::string dummy;
    Loc dl;
    declarator(ty_int, &dummy, &dl);
    skip(")");
    Type* outer = type_suffix(ty, params);
    size_t end = pos;
    pos = start + 1;
    Type* t = declarator(outer, name, name_loc);
    skip(")");
    pos = end;
    if (t->kind == Ty::ptr && t->base->kind == Ty::func) unsupported_at(*name_loc, "function pointers");
    return t;
  }
  if (tok().kind == Tk::ident) {
    if (name) *name = tok().text;
    if (name_loc) *name_loc = loc();
    pos++;
  } else if (name_loc) {
    *name_loc = loc();
  }
  return type_suffix(ty, params);
}

Type* Parser::abstract_declarator(Type* ty) { return declarator(ty, nullptr, nullptr); }

// typename = declspec abstract-declarator attributes
Type* Parser::typename_() {
  Type* base = declspec(nullptr);
  Type* t = abstract_declarator(base);
  attributes();
  return t;
}

// array-dims = ("static" | "const" | "restrict")* assign? "]" ("[" array-dims)?   (the "[" read)
Type* Parser::array_dims(Type* ty) {
  Loc l = loc();
  while (equal("static") || equal("const") || equal("restrict") || equal("__restrict")) pos++;
  if (consume("]")) {
    Type* inner = equal("[") ? (pos++, array_dims(ty)) : ty;
    return array_of(inner, -1);
  }
  Node* e = assign();
  skip("]");
  Type* inner = equal("[") ? (pos++, array_dims(ty)) : ty;
  if (inner->kind == Ty::array && inner->len < 0) error_at(l, "array type has incomplete element type");
  if (!is_integer(e->ty)) error_at(e->loc, "size of array has non-integer type");
  if (!is_constant(e)) {
    Type* t = array_of(inner, 0);
    t->len = -2;  // variable length: lowered as a pointer to alloca'd storage
    t->vla = rvalue(e);
    return t;
  }
  int64_t n = eval(e);
  if (n < 0) error_at(e->loc, "size of array is negative");
  if (n > (int64_t)1 << 40) error_at(e->loc, "size of array is too large");
  return array_of(inner, n);
}

// func-params = ("void" | param ("," param)* ("," "...")?)? ")"
// param       = declspec declarator
Type* Parser::func_params(Type* ret, std::vector<Obj*>* params) {
  if (ret->kind == Ty::array) error_at(loc(), "function returns an array");
  Type* ft = func_type(ret);
  if (equal("void") && peek(1).is(")")) {
    pos += 2;
    return ft;
  }
  if (consume(")")) {
    ft->old_style = true;
    return ft;
  }
  enter();  // parameter names live until the body's scope replaces them
  while (true) {
    if (consume("...")) {
      ft->variadic = true;
      skip(")");
      break;
    }
    DeclAttr attr;
    Type* base = declspec(&attr);
    std::string name;
    Loc nl = loc();
    Type* pt = declarator(base, &name, &nl);
    attributes();
    if (pt->kind == Ty::array) pt = qualified(pointer_to(pt->base), false);
    if (pt->kind == Ty::func) unsupported_at(nl, "function pointer parameters");
    if (pt->kind == Ty::void_) error_at(nl, "parameter '" + name + "' has incomplete type 'void'");
    ft->params.push_back(pt);
    if (params) {
      Obj* o = new_obj(name, pt, nl);
      o->is_local = true;
      params->push_back(o);
    }
    if (consume(")")) break;
    skip(",");
  }
  leave();
  return ft;
}

// type-suffix = "(" func-params | "[" array-dims | nothing
Type* Parser::type_suffix(Type* ty, std::vector<Obj*>* params) {
  if (consume("(")) return func_params(ty, params);
  if (consume("[")) return array_dims(ty);
  return ty;
}

// const-expr = conditional, evaluated now
int64_t Parser::const_expr() {
  Node* e = conditional();
  if (!is_integer(e->ty) || !is_constant(e)) error_at(e->loc, "expression is not an integer constant expression");
  return eval(e);
}

// ---- initializers -------------------------------------------------------------------

// initializer-list = "{" (designation? initializer ("," designation? initializer)* ","?)? "}"
Initializer* Parser::initializer_list(Type* ty, Type** new_ty) {
  Initializer* in = &prog.inits.emplace_back();
  in->ty = ty;
  in->is_list = true;
  Loc l = loc();
  skip("{");
  if (ty->kind == Ty::array || ty->kind == Ty::vector) {
    int64_t i = 0;
    while (!consume("}")) {
      if (equal("[") || equal(".")) unsupported_at(loc(), "designated initializers");
      if (ty->len >= 0 && i >= ty->len && ty->kind == Ty::array) error_at(loc(), "excess elements in array initializer");
      if (ty->kind == Ty::vector && i >= ty->len) error_at(loc(), "excess elements in vector initializer");
      Type* dummy;
      in->children.push_back(initializer(ty->base, &dummy));
      i++;
      if (!consume(",")) {
        skip("}");
        break;
      }
    }
    if (ty->kind == Ty::array && ty->len < 0) {
      *new_ty = array_of(ty->base, i);
      in->ty = *new_ty;
      return in;
    }
  } else if (ty->kind == Ty::struct_ || ty->kind == Ty::union_) {
    Type* st = ty->origin ? ty->origin : ty;
    if (!st->complete) error_at(l, "variable has incomplete type '" + type_name(ty) + "'");
    size_t i = 0;
    while (!consume("}")) {
      if (equal("[") || equal(".")) unsupported_at(loc(), "designated initializers");
      if (i >= st->members.size() || (ty->kind == Ty::union_ && i >= 1)) error_at(loc(), "excess elements in struct initializer");
      Type* dummy;
      in->children.push_back(initializer(st->members[i]->ty, &dummy));
      i++;
      if (!consume(",")) {
        skip("}");
        break;
      }
    }
  } else {
    // braces around a scalar
    Type* dummy;
    if (equal("}")) error_at(loc(), "empty scalar initializer");
    Initializer* c = initializer(ty, &dummy);
    consume(",");
    skip("}");
    *new_ty = ty;
    return c;
  }
  *new_ty = ty;
  return in;
}

// initializer = initializer-list | assign
Initializer* Parser::initializer(Type* ty, Type** new_ty) {
  *new_ty = ty;
  if (equal("{")) return initializer_list(ty, new_ty);
  Initializer* in = &prog.inits.emplace_back();
  in->ty = ty;
  if (ty->kind == Ty::array) {
    if (tok().kind == Tk::str) unsupported_at(loc(), "string initializers for arrays");
    error_at(loc(), "array must be initialized with a brace-enclosed initializer");
  }
  in->expr = convert(assign(), ty, "initializing");
  return in;
}

// ---- file scope ---------------------------------------------------------------------

// function = declspec declarator (";" | compound-stmt)   (declspec and declarator read)
void Parser::function(Type* ty, const std::string& name, Loc l, DeclAttr& attr, std::vector<Obj*>& params) {
  VarScope* prev = scopes.back().vars.count(name) ? &scopes.back().vars[name] : nullptr;
  Obj* fn = nullptr;
  if (prev && prev->var && prev->var->is_function) {
    fn = prev->var;
    if (equal("{") && fn->is_definition) error_at(l, "redefinition of '" + name + "'");
    if (fn->ty->params.size() != ty->params.size() && !fn->ty->old_style && !ty->old_style)
      error_at(l, "conflicting types for '" + name + "'");
    if (!ty->old_style) fn->ty = ty;
  } else if (prev) {
    error_at(l, "'" + name + "' redeclared as different kind of symbol");
  } else {
    fn = new_obj(name, ty, l);
    fn->is_function = true;
    declare(name).var = fn;
    prog.globals.push_back(fn);
  }
  fn->is_static |= attr.storage == Storage::static_;
  fn->is_inline |= attr.is_inline;
  fn->always_inline |= attr.always_inline;
  if (!equal("{")) {
    skip(";");
    return;
  }
  if (ty->variadic) unsupported_at(l, "variadic function definitions");
  if ((ty->ret->kind == Ty::struct_ || ty->ret->kind == Ty::union_) && !ty->ret->complete)
    error_at(l, "return type is an incomplete type");
  fn->is_definition = true;
  fn->loc = l;
  fn->params = params;
  if (in_prelude) {
    // Most of the prelude is never called: its bodies wait until a call needs them.
    fn->lazy_body = pos;
    int depth = 0;
    do {
      if (equal("{")) depth++;
      if (equal("}")) depth--;
      pos++;
    } while (depth > 0 && tok().kind != Tk::eof);
    return;
  }
  function_body(fn);
}

void Parser::function_body(Obj* fn) {
  current_fn = fn;
  enter();
  for (Obj* p : fn->params) {
    if (p->name.empty()) error_at(p->loc, "parameter name omitted");
    if (scopes.back().vars.count(p->name)) error_at(p->loc, "redefinition of parameter '" + p->name + "'");
    declare(p->name).var = p;
  }
  gotos.clear();
  labels.clear();
  fn->body = compound_stmt();
  leave();
  for (auto& [g, gl] : gotos)
    if (!labels.count(g)) error_at(gl, "label '" + g + "' used but not defined");
  current_fn = nullptr;
}

// Parses a prelude function's body where it stands, seeing only the prelude's scope,
// from wherever the first call to it is being parsed.
void Parser::parse_lazy_body(Obj* fn) {
  size_t at = fn->lazy_body;
  fn->lazy_body = 0;
  std::vector<Token> sub;
  bool in_sub = outer_toks != nullptr;
  std::vector<Token>* saved_outer = outer_toks;
  if (in_sub) {
    sub = std::move(toks);
    toks = std::move(*outer_toks);
    outer_toks = nullptr;
  }
  size_t saved_pos = pos;
  std::vector<Scope> saved_scopes = std::move(scopes);
  scopes.clear();
  scopes.push_back(saved_scopes.front());
  Obj* saved_fn = current_fn;
  auto saved_gotos = std::move(gotos);
  auto saved_labels = std::move(labels);
  int saved_loops = loop_depth, saved_switches = switch_depth;
  Node* saved_switch = cur_switch;
  bool saved_prelude = in_prelude;
  loop_depth = switch_depth = 0;
  cur_switch = nullptr;
  in_prelude = true;
  pos = at;
  function_body(fn);
  in_prelude = saved_prelude;
  cur_switch = saved_switch;
  loop_depth = saved_loops;
  switch_depth = saved_switches;
  labels = std::move(saved_labels);
  gotos = std::move(saved_gotos);
  current_fn = saved_fn;
  scopes = std::move(saved_scopes);
  pos = saved_pos;
  if (in_sub) {
    *saved_outer = std::move(toks);
    toks = std::move(sub);
    outer_toks = saved_outer;
  }
}

// global-variables = declarator ("=" initializer)? ("," declarator ("=" initializer)?)* ";"
void Parser::global_variables(Type* base, DeclAttr& attr) {
  bool first = true;
  while (!consume(";")) {
    if (!first) skip(",");
    first = false;
    std::string name;
    Loc nl = loc();
    std::vector<Obj*> params;
    Type* ty = declarator(base, &name, &nl, &params);
    Attrs a = attributes();
    if (name.empty()) error_at(nl, "expected identifier or '('");
    if (attr.storage == Storage::typedef_) {
      if (a.vector_size) ty = vector_of(ty, a.vector_size, nl);
      if (a.aligned) ty = aligned_to(ty, a.aligned);
      VarScope& s = declare(name);
      s.type_def = ty;
      continue;
    }
    if (ty->kind == Ty::func) {
      DeclAttr fa = attr;
      fa.always_inline |= a.always_inline;
      function(ty, name, nl, fa, params);
      return;
    }
    if (ty->kind == Ty::array && ty->len == -2) error_at(nl, "variably modified '" + name + "' at file scope");
    if (ty->kind == Ty::void_) error_at(nl, "variable '" + name + "' declared void");
    if (scopes.back().vars.count(name)) {
      VarScope& s = scopes.back().vars[name];
      if (s.var && !s.var->is_function && attr.storage == Storage::extern_) continue;
      if (s.var && !s.var->is_function && !s.var->is_definition) {
        // a tentative or extern declaration followed by the definition
      } else {
        error_at(nl, "redefinition of '" + name + "'");
      }
    }
    Obj* v = new_obj(name, ty, nl);
    v->is_static = attr.storage == Storage::static_;
    v->align = std::max(attr.align, a.aligned);
    v->is_definition = attr.storage != Storage::extern_;
    declare(name).var = v;
    if (attr.storage == Storage::extern_) {
      if (equal("=")) error_at(loc(), "'" + name + "' initialized and declared 'extern'");
      continue;
    }
    if (consume("=")) {
      Type* nt;
      v->init = initializer(ty, &nt);
      v->ty = nt;
    }
    if (v->ty->kind == Ty::array && v->ty->len < 0) error_at(nl, "array size missing in '" + name + "'");
    prog.globals.push_back(v);
  }
}

// program = (typedef | function | global-variables)*
void Parser::program() {
  enter();
  in_prelude = true;
  while (tok().kind != Tk::eof) {
    if (tok().kind == Tk::pragma) {
      const Token& p = tok();
      if (!p.pragma.empty() && p.pragma[0].is("omp")) {
        std::string what = p.pragma.size() > 1 ? p.pragma[1].text : "";
        if (what == "declare") {
          // "declare simd" and friends are hints about the next function
          pos++;
          continue;
        }
        unsupported_at(p.loc, "'#pragma omp " + what + "' at file scope");
      }
      pos++;
      continue;
    }
    if (in_prelude && tok().loc.file[0] != '<') {
      // the prelude is done: the kernel's own file scope begins
      in_prelude = false;
      enter();
    }
    if (consume(";")) continue;
    if (equal("_Static_assert")) {
      Loc l = loc();
      pos++;
      skip("(");
      int64_t v = const_expr();
      std::string msg;
      if (consume(",")) {
        if (tok().kind != Tk::str) expected("string literal");
        msg = tok().text;
        pos++;
      }
      skip(")");
      skip(";");
      if (!v) error_at(l, "static assertion failed: " + msg);
      continue;
    }
    if (!is_typename() && tok().kind != Tk::ident) {
      error_at(loc(), "expected identifier or '(' before '" + tok().text + "'");
    }
    if (!is_typename()) {
      // gcc accepts "x;" as an implicit int with a warning; a kernel never means that
      error_at(loc(), "unknown type name '" + tok().text + "'");
    }
    DeclAttr attr;
    Type* base = declspec(&attr);
    if (consume(";")) continue;  // a struct or enum declaration alone
    global_variables(base, attr);
  }
}

void parse(std::vector<Token> toks, Program& prog) {
  Parser p(std::move(toks), prog);
  p.program();
}

}  // namespace kernelc
