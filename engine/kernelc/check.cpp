// Typing: every expression node gets its type here, as it is built, and the usual
// arithmetic conversions and integer promotions become explicit casts. After this the
// lowering never has to reason about C's conversion rules: operands of a binary node
// always share the node's type.
// One file over 600 lines: C's conversion rules are one table of cases, each operator
// reading the same promotions.
#include "kernelc/parser.hpp"

namespace kernelc {

// ---- type predicates ----------------------------------------------------------------

bool is_integer(const Type* t) {
  switch (t->kind) {
    case Ty::bool_: case Ty::char_: case Ty::schar: case Ty::uchar: case Ty::short_:
    case Ty::ushort: case Ty::int_: case Ty::uint: case Ty::long_: case Ty::ulong:
    case Ty::llong: case Ty::ullong: case Ty::enum_: return true;
    default: return false;
  }
}
bool is_flonum(const Type* t) { return t->kind == Ty::float_ || t->kind == Ty::double_ || t->kind == Ty::ldouble; }
bool is_arith(const Type* t) { return is_integer(t) || is_flonum(t); }
bool is_scalar(const Type* t) { return is_arith(t) || t->kind == Ty::ptr; }
bool is_ptr_like(const Type* t) { return t->kind == Ty::ptr || t->kind == Ty::array; }
bool is_unsigned(const Type* t) {
  switch (t->kind) {
    case Ty::bool_: case Ty::uchar: case Ty::ushort: case Ty::uint: case Ty::ulong: case Ty::ullong: return true;
    default: return false;
  }
}

std::string type_name(const Type* t) {
  std::string q = t->is_const ? "const " : "";
  switch (t->kind) {
    case Ty::void_: return q + "void";
    case Ty::bool_: return q + "_Bool";
    case Ty::char_: return q + "char";
    case Ty::schar: return q + "signed char";
    case Ty::uchar: return q + "unsigned char";
    case Ty::short_: return q + "short int";
    case Ty::ushort: return q + "short unsigned int";
    case Ty::int_: return q + "int";
    case Ty::uint: return q + "unsigned int";
    case Ty::long_: return q + "long int";
    case Ty::ulong: return q + "long unsigned int";
    case Ty::llong: return q + "long long int";
    case Ty::ullong: return q + "long long unsigned int";
    case Ty::float_: return q + "float";
    case Ty::double_: return q + "double";
    case Ty::ldouble: return q + "long double";
    case Ty::enum_: return q + "enum " + t->tag;
    case Ty::ptr: return type_name(t->base) + " *" + (t->is_const ? "const" : "");
    case Ty::array: return type_name(t->base) + "[" + (t->len >= 0 ? std::to_string(t->len) : "") + "]";
    case Ty::vector: return "__vector(" + std::to_string(t->len) + ") " + type_name(t->base);
    case Ty::struct_: return q + "struct " + (t->tag.empty() ? "<anonymous>" : t->tag);
    case Ty::union_: return q + "union " + (t->tag.empty() ? "<anonymous>" : t->tag);
    case Ty::func: return type_name(t->ret) + " (function)";
  }
  return "?";
}

// ---- type construction --------------------------------------------------------------

Type* Parser::new_type(Ty k, int64_t size, int64_t align) {
  Type& t = prog.types.emplace_back();
  t.kind = k;
  t.size = size;
  t.align = align;
  return &t;
}

Type* Parser::pointer_to(Type* base) {
  Type* t = new_type(Ty::ptr, 8, 8);
  t->base = base;
  return t;
}

Type* Parser::array_of(Type* base, int64_t len) {
  Type* t = new_type(Ty::array, base->size * (len < 0 ? 0 : len), base->align);
  t->base = base;
  t->len = len;
  return t;
}

Type* Parser::vector_of(Type* base, int64_t bytes, Loc where) {
  if (!is_arith(base) || base->kind == Ty::bool_) error_at(where, "invalid vector type for attribute 'vector_size'");
  if (bytes <= 0 || bytes % base->size || ((bytes / base->size) & (bytes / base->size - 1)))
    error_at(where, "number of vector components " + std::to_string(bytes / std::max<int64_t>(base->size, 1)) + " not a power of two");
  Type* t = new_type(Ty::vector, bytes, bytes);
  t->base = base;
  t->len = bytes / base->size;
  return t;
}

Type* Parser::func_type(Type* ret) {
  Type* t = new_type(Ty::func, 1, 1);
  t->ret = ret;
  return t;
}

Type* Parser::qualified(Type* t, bool is_const) {
  if (t->is_const == is_const) return t;
  Type* q = new_type(t->kind, t->size, t->align);
  *q = *t;
  q->is_const = is_const;
  q->origin = unqual(t);
  return q;
}

Type* Parser::aligned_to(Type* t, int64_t align) {
  Type* q = new_type(t->kind, t->size, align);
  *q = *t;
  q->align = align;
  q->unaligned = align < t->align;
  q->origin = nullptr;  // a distinct type for the back end
  q->jit = nullptr;
  return q;
}

// ---- nodes ------------------------------------------------------------------------------

Node* Parser::new_node(Nd k, Loc l) {
  Node& n = prog.nodes.emplace_back();
  n.kind = k;
  n.loc = l;
  return &n;
}

Node* Parser::new_num(int64_t v, Type* ty, Loc l) {
  Node* n = new_node(Nd::num, l);
  n->ival = v;
  n->ty = ty;
  return n;
}

Node* Parser::new_var(Obj* v, Loc l) {
  Node* n = new_node(v->is_function ? Nd::func_ref : Nd::var, l);
  n->var = v;
  n->ty = v->ty;
  v->referenced = true;
  return n;
}

static bool same_type(const Type* a, const Type* b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  if (a->kind == Ty::ptr) return same_type(a->base, b->base) || a->base->kind == Ty::void_ || b->base->kind == Ty::void_;
  if (a->kind == Ty::vector) return a->len == b->len && a->base->kind == b->base->kind;
  if (a->kind == Ty::struct_ || a->kind == Ty::union_) {
    const Type* ao = a->origin ? a->origin : a;
    const Type* bo = b->origin ? b->origin : b;
    return ao == bo;
  }
  if (a->kind == Ty::array) return same_type(a->base, b->base);
  return true;
}

Node* Parser::new_cast(Node* e, Type* ty) {
  if (e->ty == ty) return e;
  Node* n = new_node(Nd::cast, e->loc);
  n->lhs = e;
  n->ty = ty;
  return n;
}

// Array and function designators become pointers where a value is needed.
Node* Parser::rvalue(Node* e) {
  if (e->ty->kind == Ty::array) {
    Node* n = new_node(Nd::cast, e->loc);  // lowered as &e[0]
    n->lhs = e;
    n->ty = pointer_to(e->ty->base);
    return n;
  }
  if (e->ty->kind == Ty::func) unsupported_at(e->loc, "function pointers");
  return e;
}

bool Parser::is_null_constant(Node* e) {
  if (e->kind == Nd::cast && e->ty->kind == Ty::ptr && e->ty->base->kind == Ty::void_) e = e->lhs;
  return is_integer(e->ty) && is_constant(e) && eval(e) == 0;
}

// Conversion as if by assignment: the rules for initializers, arguments and returns.
Node* Parser::convert(Node* e, Type* to, const char* context) {
  e = rvalue(e);
  Type* from = e->ty;
  if (to->kind == Ty::void_) error_at(e->loc, std::string("void value in ") + context);
  if (is_arith(to) && is_arith(from)) return new_cast(e, unqual(to));
  if (to->kind == Ty::ptr && from->kind == Ty::ptr) return new_cast(e, to);
  if (to->kind == Ty::ptr && is_integer(from)) {
    if (!is_null_constant(e))
      error_at(e->loc, std::string("incompatible integer to pointer conversion in ") + context + " (from '" + type_name(from) + "' to '" + type_name(to) + "')");
    return new_cast(e, to);
  }
  if (to->kind == Ty::bool_ && from->kind == Ty::ptr) return new_cast(e, to);
  if (is_integer(to) && from->kind == Ty::ptr)
    error_at(e->loc, std::string("incompatible pointer to integer conversion in ") + context + " (from '" + type_name(from) + "' to '" + type_name(to) + "')");
  if (same_type(unqual(to), unqual(from))) return (to->kind == Ty::vector && to != from) ? new_cast(e, to) : e;
  error_at(e->loc, std::string("incompatible types when ") + context + " to type '" + type_name(to) + "' from type '" + type_name(from) + "'");
}

Node* Parser::to_condition(Node* e, const char* context) {
  e = rvalue(e);
  if (!is_scalar(e->ty))
    error_at(e->loc, std::string("used ") + type_name(e->ty) + " value where scalar is required" + (context ? std::string(" in ") + context : ""));
  return e;
}

Type* Parser::promote(Type* t) {
  t = unqual(t);
  if (t->kind == Ty::enum_) return ty_int;
  if (is_integer(t) && t->size < 4) return ty_int;
  if (t->kind == Ty::bool_) return ty_int;
  return t;
}

// The usual arithmetic conversions.
Type* Parser::common_type(Type* a, Type* b) {
  a = promote(a);
  b = promote(b);
  if (a->kind == Ty::ldouble || b->kind == Ty::ldouble) return ty_ldouble;
  if (a->kind == Ty::double_ || b->kind == Ty::double_) return ty_double;
  if (a->kind == Ty::float_ || b->kind == Ty::float_) return ty_float;
  if (a->kind == b->kind) return a;
  auto rank = [](Type* t) { return t->size == 8 ? (t->kind == Ty::llong || t->kind == Ty::ullong ? 3 : 2) : 1; };
  bool ua = is_unsigned(a), ub = is_unsigned(b);
  if (ua == ub) return rank(a) >= rank(b) ? a : b;
  Type* u = ua ? a : b;
  Type* s = ua ? b : a;
  if (rank(u) >= rank(s)) return u;
  if (s->size > u->size) return s;
  return s->kind == Ty::long_ ? ty_ulong : ty_ullong;
}

// Vector with scalar (a GNU extension): the scalar is splatted.
static Node* splat(Parser& p, Node* s, Type* vt) {
  Node* n = p.new_node(Nd::vec_lit, s->loc);
  n->ty = vt;
  Node* c = p.new_cast(s, vt->base);
  for (int64_t i = 0; i < vt->len; i++) n->args.push_back(c);
  return n;
}

Node* Parser::new_binary(Nd k, Node* a, Node* b, Loc l) {
  a = rvalue(a);
  b = rvalue(b);
  Node* n = new_node(k, l);
  if (a->ty->kind == Ty::vector || b->ty->kind == Ty::vector) {
    if (k == Nd::mod || k == Nd::shl || k == Nd::shr || k == Nd::band || k == Nd::bor || k == Nd::bxor)
      if (is_flonum(a->ty->kind == Ty::vector ? a->ty->base : a->ty))
        error_at(l, "invalid operands to binary expression ('" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
    if (a->ty->kind != Ty::vector) a = splat(*this, a, b->ty);
    if (b->ty->kind != Ty::vector) b = splat(*this, b, a->ty);
    if (!same_type(unqual(a->ty), unqual(b->ty)))
      error_at(l, "invalid operands to binary expression ('" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
    n->lhs = a;
    n->rhs = new_cast(b, a->ty);
    n->ty = a->ty;
    return n;
  }
  bool int_only = k == Nd::mod || k == Nd::band || k == Nd::bor || k == Nd::bxor || k == Nd::shl || k == Nd::shr;
  if (!is_arith(a->ty) || !is_arith(b->ty) || (int_only && (!is_integer(a->ty) || !is_integer(b->ty))))
    error_at(l, "invalid operands to binary " + std::string(k == Nd::mod ? "%" : k == Nd::shl ? "<<" : k == Nd::shr ? ">>" : k == Nd::band ? "&" : k == Nd::bor ? "|" : k == Nd::bxor ? "^" : k == Nd::mul ? "*" : k == Nd::div ? "/" : k == Nd::add ? "+" : "-") +
                    " (have '" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
  if (k == Nd::shl || k == Nd::shr) {
    Type* t = promote(a->ty);
    n->lhs = new_cast(a, t);
    n->rhs = new_cast(b, t);  // the back end wants one type
    n->ty = t;
    return n;
  }
  Type* t = common_type(a->ty, b->ty);
  n->lhs = new_cast(a, t);
  n->rhs = new_cast(b, t);
  n->ty = t;
  return n;
}

Node* Parser::new_add(Node* a, Node* b, Loc l) {
  a = rvalue(a);
  b = rvalue(b);
  if (is_arith(a->ty) && is_arith(b->ty)) return new_binary(Nd::add, a, b, l);
  if (a->ty->kind == Ty::vector || b->ty->kind == Ty::vector) return new_binary(Nd::add, a, b, l);
  if (is_integer(a->ty) && b->ty->kind == Ty::ptr) std::swap(a, b);
  if (a->ty->kind != Ty::ptr || !is_integer(b->ty))
    error_at(l, "invalid operands to binary + (have '" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
  if (a->ty->base->kind == Ty::void_ || a->ty->base->kind == Ty::func)
    error_at(l, "arithmetic on a pointer to " + type_name(a->ty->base));
  Node* n = new_node(Nd::add, l);
  n->lhs = a;
  n->rhs = new_cast(b, ty_long);
  n->ty = a->ty;
  return n;
}

Node* Parser::new_sub(Node* a, Node* b, Loc l) {
  a = rvalue(a);
  b = rvalue(b);
  if (a->ty->kind == Ty::ptr && b->ty->kind == Ty::ptr) {
    if (!same_type(unqual(a->ty->base), unqual(b->ty->base)) && a->ty->base->size != b->ty->base->size)
      error_at(l, "invalid operands to binary - (have '" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
    Node* n = new_node(Nd::ptr_diff, l);
    n->lhs = a;
    n->rhs = new_cast(b, a->ty);
    n->ty = ty_long;
    return n;
  }
  if (a->ty->kind == Ty::ptr && is_integer(b->ty)) {
    Node* n = new_node(Nd::sub, l);
    n->lhs = a;
    n->rhs = new_cast(b, ty_long);
    n->ty = a->ty;
    return n;
  }
  return new_binary(Nd::sub, a, b, l);
}

Node* Parser::new_compare(Nd k, Node* a, Node* b, Loc l) {
  a = rvalue(a);
  b = rvalue(b);
  Node* n = new_node(k, l);
  n->ty = ty_int;
  if (a->ty->kind == Ty::ptr || b->ty->kind == Ty::ptr) {
    if (a->ty->kind == Ty::ptr && b->ty->kind == Ty::ptr) {
      n->lhs = a;
      n->rhs = new_cast(b, a->ty);
    } else if (a->ty->kind == Ty::ptr && is_integer(b->ty)) {
      n->lhs = a;
      n->rhs = new_cast(b, a->ty);
    } else if (b->ty->kind == Ty::ptr && is_integer(a->ty)) {
      n->lhs = new_cast(a, b->ty);
      n->rhs = b;
    } else {
      error_at(l, "comparison between '" + type_name(a->ty) + "' and '" + type_name(b->ty) + "'");
    }
    return n;
  }
  if (a->ty->kind == Ty::vector || b->ty->kind == Ty::vector)
    unsupported_at(l, "vector comparisons");
  if (!is_arith(a->ty) || !is_arith(b->ty))
    error_at(l, "invalid operands to comparison ('" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
  Type* t = common_type(a->ty, b->ty);
  n->lhs = new_cast(a, t);
  n->rhs = new_cast(b, t);
  return n;
}

Node* Parser::new_logical(Nd k, Node* a, Node* b, Loc l) {
  Node* n = new_node(k, l);
  n->lhs = to_condition(a, nullptr);
  n->rhs = b ? to_condition(b, nullptr) : nullptr;
  n->ty = ty_int;
  return n;
}

void Parser::require_lvalue(Node* e, const char* what) {
  switch (e->kind) {
    case Nd::var: case Nd::deref: case Nd::vec_index: case Nd::compound_lit: break;
    case Nd::member:
      require_lvalue(e->lhs, what);
      break;
    default: error_at(e->loc, std::string("lvalue required as ") + what);
  }
  if (e->ty->kind == Ty::array && std::string(what) != "unary '&' operand")
    error_at(e->loc, "assignment to expression with array type");
  if (e->ty->is_const && std::string(what) != "unary '&' operand") {
    if (e->kind == Nd::var)
      error_at(e->loc, "assignment of read-only variable '" + e->var->name + "'");
    error_at(e->loc, "assignment of read-only location");
  }
}

Node* Parser::new_assign(Node* a, Node* b, Loc l) {
  require_lvalue(a, "left operand of assignment");
  Node* n = new_node(Nd::assign, l);
  n->lhs = a;
  try {
    n->rhs = convert(b, a->ty, "assigning");
  } catch (Error& e) {
    e.loc = l;  // gcc points at the '='
    throw;
  }
  n->ty = unqual(a->ty);
  return n;
}

// a op= b keeps a's lvalue computed once; `rhs` carries the operation as if a were read.
Node* Parser::new_op_assign(Nd op, Node* a, Node* b, Loc l) {
  require_lvalue(a, "left operand of assignment");
  Node* n = new_node(Nd::op_assign, l);
  n->op = op;
  n->lhs = a;
  n->ty = unqual(a->ty);
  Node* value = op == Nd::add ? new_add(a, b, l) : op == Nd::sub ? new_sub(a, b, l) : new_binary(op, a, b, l);
  if (value->kind == Nd::ptr_diff) error_at(l, "invalid operands to binary -=");
  n->rhs = convert(value, a->ty, "assigning");  // its read of `a` is replaced when lowering
  return n;
}

Node* Parser::new_incdec(Nd k, Node* a, Loc l) {
  require_lvalue(a, k == Nd::pre_inc || k == Nd::post_inc ? "increment operand" : "decrement operand");
  if (!is_scalar(a->ty)) error_at(l, "wrong type argument to " + std::string(k == Nd::pre_inc || k == Nd::post_inc ? "increment" : "decrement"));
  Node* n = new_node(k, l);
  n->lhs = a;
  n->ty = unqual(a->ty);
  bool inc = k == Nd::pre_inc || k == Nd::post_inc;
  Node* one = new_num(1, ty_int, l);
  n->rhs = convert(inc ? new_add(a, one, l) : new_sub(a, one, l), a->ty, "assigning");
  return n;
}

Node* Parser::new_unary(Nd k, Node* a, Loc l) {
  a = rvalue(a);
  Node* n = new_node(k, l);
  if (k == Nd::lnot) {
    n->lhs = to_condition(a, nullptr);
    n->ty = ty_int;
    return n;
  }
  if (a->ty->kind == Ty::vector) {
    if (k == Nd::bnot && is_flonum(a->ty->base)) error_at(l, "wrong type argument to bit-complement");
    n->lhs = a;
    n->ty = a->ty;
    return n;
  }
  if (k == Nd::bnot && !is_integer(a->ty)) error_at(l, "wrong type argument to bit-complement");
  if (!is_arith(a->ty)) error_at(l, "wrong type argument to unary minus");
  Type* t = promote(a->ty);
  n->lhs = new_cast(a, t);
  n->ty = t;
  return n;
}

Node* Parser::new_deref(Node* a, Loc l) {
  a = rvalue(a);
  if (a->ty->kind != Ty::ptr) error_at(l, "invalid type argument of unary '*' (have '" + type_name(a->ty) + "')");
  if (a->ty->base->kind == Ty::void_) error_at(l, "dereferencing 'void *' pointer");
  Node* n = new_node(Nd::deref, l);
  n->lhs = a;
  n->ty = a->ty->base;
  return n;
}

Node* Parser::new_addr(Node* a, Loc l) {
  if (a->kind == Nd::func_ref) unsupported_at(l, "function pointers");
  if (a->kind == Nd::vec_index) error_at(l, "cannot take the address of a vector element");
  require_lvalue(a, "unary '&' operand");
  for (Node* b = a; b; b = (b->kind == Nd::member ? b->lhs : nullptr))
    if (b->kind == Nd::var) b->var->address_taken = true;
  if (a->kind == Nd::var && a->var->is_vla) unsupported_at(l, "the address of a variable-length array");
  Node* n = new_node(Nd::addr, l);
  n->lhs = a;
  n->ty = pointer_to(a->ty);
  return n;
}

Node* Parser::new_member(Node* a, const Token& name, bool arrow, Loc l) {
  if (arrow) a = new_deref(a, l);
  if (a->ty->kind != Ty::struct_ && a->ty->kind != Ty::union_)
    error_at(l, "request for member '" + name.text + "' in something not a structure or union");
  Type* st = a->ty->origin ? a->ty->origin : a->ty;
  if (!st->complete) error_at(l, "invalid use of incomplete type '" + type_name(st) + "'");
  for (Member* m : st->members)
    if (m->name == name.text) {
      Node* n = new_node(Nd::member, l);
      n->lhs = a;
      n->mem = m;
      n->ty = a->ty->is_const ? qualified(m->ty, true) : m->ty;
      return n;
    }
  error_at(name.loc, "'" + type_name(st) + "' has no member named '" + name.text + "'");
}

Node* Parser::new_index(Node* a, Node* i, Loc l) {
  if (a->ty->kind == Ty::vector) {
    if (!is_integer(i->ty)) error_at(l, "vector subscript is not an integer");
    Node* n = new_node(Nd::vec_index, l);
    n->lhs = a;
    n->rhs = new_cast(rvalue(i), ty_long);
    n->ty = a->ty->is_const ? qualified(a->ty->base, true) : a->ty->base;
    return n;
  }
  Node* ar = rvalue(a);
  Node* ir = rvalue(i);
  if (!(ar->ty->kind == Ty::ptr && is_integer(ir->ty)) && !(ir->ty->kind == Ty::ptr && is_integer(ar->ty)))
    error_at(l, "subscripted value is neither array nor pointer nor vector");
  return new_deref(new_add(a, i, l), l);
}

Node* Parser::new_cond(Node* c, Node* a, Node* b, Loc l) {
  Node* n = new_node(Nd::cond, l);
  n->cond = to_condition(c, nullptr);
  a = rvalue(a);
  b = rvalue(b);
  if (is_arith(a->ty) && is_arith(b->ty)) {
    Type* t = common_type(a->ty, b->ty);
    n->then = new_cast(a, t);
    n->els = new_cast(b, t);
    n->ty = t;
  } else if (a->ty->kind == Ty::ptr && (b->ty->kind == Ty::ptr || is_null_constant(b))) {
    n->then = a;
    n->els = new_cast(b, a->ty);
    n->ty = a->ty;
  } else if (b->ty->kind == Ty::ptr && is_null_constant(a)) {
    n->then = new_cast(a, b->ty);
    n->els = b;
    n->ty = b->ty;
  } else if (a->ty->kind == Ty::void_ && b->ty->kind == Ty::void_) {
    n->then = a;
    n->els = b;
    n->ty = ty_void;
  } else if (same_type(unqual(a->ty), unqual(b->ty))) {
    n->then = a;
    n->els = new_cast(b, a->ty);
    n->ty = unqual(a->ty);
  } else {
    error_at(l, "type mismatch in conditional expression ('" + type_name(a->ty) + "' and '" + type_name(b->ty) + "')");
  }
  return n;
}

Node* Parser::new_call(Obj* fn, std::vector<Node*> args, Loc l) {
  if (fn->lazy_body) parse_lazy_body(fn);
  Type* ft = fn->ty;
  Node* n = new_node(Nd::call, l);
  n->var = fn;
  n->ty = ft->ret;
  fn->referenced = true;
  if (!ft->old_style) {
    if (args.size() < ft->params.size())
      error_at(l, "too few arguments to function '" + fn->name + "'");
    if (args.size() > ft->params.size() && !ft->variadic)
      error_at(l, "too many arguments to function '" + fn->name + "'");
  }
  for (size_t i = 0; i < args.size(); i++) {
    if (i < ft->params.size()) {
      std::string ctx = "passing argument " + std::to_string(i + 1) + " of '" + fn->name + "'";
      n->args.push_back(convert(args[i], ft->params[i], ctx.c_str()));
    } else {
      Node* a = rvalue(args[i]);
      if (a->ty->kind == Ty::float_) a = new_cast(a, ty_double);
      else if (is_integer(a->ty)) a = new_cast(a, promote(a->ty));
      n->args.push_back(a);
    }
  }
  return n;
}

// ---- constant expressions -----------------------------------------------------------

bool Parser::is_constant(Node* e) {
  switch (e->kind) {
    case Nd::num: case Nd::fnum: return true;
    case Nd::cast: return (is_arith(e->ty) || e->ty->kind == Ty::ptr) && e->lhs->ty->kind != Ty::array && is_constant(e->lhs);
    case Nd::add: case Nd::sub: case Nd::mul: case Nd::div: case Nd::mod: case Nd::band: case Nd::bor:
    case Nd::bxor: case Nd::shl: case Nd::shr: case Nd::eq: case Nd::ne: case Nd::lt: case Nd::le:
    case Nd::land: case Nd::lor: case Nd::comma:
      return e->ty->kind != Ty::ptr && is_constant(e->lhs) && is_constant(e->rhs);
    case Nd::neg: case Nd::bnot: case Nd::lnot: return is_constant(e->lhs);
    case Nd::cond: return is_constant(e->cond) && is_constant(e->then) && is_constant(e->els);
    default: return false;
  }
}

static int64_t wrap(int64_t v, const Type* t) {
  switch (t->size) {
    case 1: return is_unsigned(t) ? (int64_t)(uint8_t)v : (int64_t)(int8_t)v;
    case 2: return is_unsigned(t) ? (int64_t)(uint16_t)v : (int64_t)(int16_t)v;
    case 4: return is_unsigned(t) ? (int64_t)(uint32_t)v : (int64_t)(int32_t)v;
    default: return v;
  }
}

int64_t Parser::eval(Node* e) {
  if (is_flonum(e->ty)) return (int64_t)eval_double(e);
  auto u = [](int64_t v) { return (uint64_t)v; };
  switch (e->kind) {
    case Nd::num: return e->ival;
    case Nd::cast:
      if (e->ty->kind == Ty::bool_) return is_flonum(e->lhs->ty) ? eval_double(e->lhs) != 0 : eval(e->lhs) != 0;
      if (is_flonum(e->lhs->ty)) return wrap((int64_t)eval_double(e->lhs), e->ty);
      return e->ty->kind == Ty::ptr ? eval(e->lhs) : wrap(eval(e->lhs), e->ty);
    case Nd::add: return wrap((int64_t)(u(eval(e->lhs)) + u(eval(e->rhs))), e->ty);
    case Nd::sub: return wrap((int64_t)(u(eval(e->lhs)) - u(eval(e->rhs))), e->ty);
    case Nd::mul: return wrap((int64_t)(u(eval(e->lhs)) * u(eval(e->rhs))), e->ty);
    case Nd::div: case Nd::mod: {
      int64_t a = eval(e->lhs), b = eval(e->rhs);
      if (b == 0) error_at(e->loc, "division by zero in a constant expression");
      if (is_unsigned(e->ty)) return wrap((int64_t)(e->kind == Nd::div ? u(a) / u(b) : u(a) % u(b)), e->ty);
      if (a == INT64_MIN && b == -1) return e->kind == Nd::div ? a : 0;
      return wrap(e->kind == Nd::div ? a / b : a % b, e->ty);
    }
    case Nd::band: return eval(e->lhs) & eval(e->rhs);
    case Nd::bor: return eval(e->lhs) | eval(e->rhs);
    case Nd::bxor: return eval(e->lhs) ^ eval(e->rhs);
    case Nd::shl: {
      int64_t s = eval(e->rhs);
      return (s < 0 || s >= 64) ? 0 : wrap((int64_t)(u(eval(e->lhs)) << s), e->ty);
    }
    case Nd::shr: {
      int64_t s = eval(e->rhs);
      if (s < 0 || s >= 64) return 0;
      return is_unsigned(e->ty) ? wrap((int64_t)(u(eval(e->lhs)) >> s), e->ty) : eval(e->lhs) >> s;
    }
    case Nd::eq: case Nd::ne: case Nd::lt: case Nd::le: {
      Node* a = e->lhs;
      bool fl = is_flonum(a->ty);
      double x = fl ? eval_double(e->lhs) : 0, y = fl ? eval_double(e->rhs) : 0;
      int64_t i = fl ? 0 : eval(e->lhs), j = fl ? 0 : eval(e->rhs);
      bool un = is_unsigned(a->ty);
      switch (e->kind) {
        case Nd::eq: return fl ? x == y : i == j;
        case Nd::ne: return fl ? x != y : i != j;
        case Nd::lt: return fl ? x < y : un ? u(i) < u(j) : i < j;
        default: return fl ? x <= y : un ? u(i) <= u(j) : i <= j;
      }
    }
    case Nd::land: return (is_flonum(e->lhs->ty) ? eval_double(e->lhs) != 0 : eval(e->lhs) != 0) && (is_flonum(e->rhs->ty) ? eval_double(e->rhs) != 0 : eval(e->rhs) != 0);
    case Nd::lor: return (is_flonum(e->lhs->ty) ? eval_double(e->lhs) != 0 : eval(e->lhs) != 0) || (is_flonum(e->rhs->ty) ? eval_double(e->rhs) != 0 : eval(e->rhs) != 0);
    case Nd::comma: return eval(e->rhs);
    case Nd::neg: return wrap((int64_t)(0 - u(eval(e->lhs))), e->ty);
    case Nd::bnot: return wrap(~eval(e->lhs), e->ty);
    case Nd::lnot: return is_flonum(e->lhs->ty) ? eval_double(e->lhs) == 0 : eval(e->lhs) == 0;
    case Nd::cond: return (is_flonum(e->cond->ty) ? eval_double(e->cond) != 0 : eval(e->cond) != 0) ? eval(e->then) : eval(e->els);
    default: error_at(e->loc, "expression is not an integer constant expression");
  }
}

double Parser::eval_double(Node* e) {
  if (!is_flonum(e->ty)) return is_unsigned(e->ty) ? (double)(uint64_t)eval(e) : (double)eval(e);
  switch (e->kind) {
    case Nd::fnum: return e->ty->kind == Ty::float_ ? (double)(float)e->fval : e->fval;
    case Nd::cast: {
      double v = eval_double(e->lhs);
      return e->ty->kind == Ty::float_ ? (double)(float)v : v;
    }
    case Nd::add: return eval_double(e->lhs) + eval_double(e->rhs);
    case Nd::sub: return eval_double(e->lhs) - eval_double(e->rhs);
    case Nd::mul: return eval_double(e->lhs) * eval_double(e->rhs);
    case Nd::div: return eval_double(e->lhs) / eval_double(e->rhs);
    case Nd::neg: return -eval_double(e->lhs);
    case Nd::comma: return eval_double(e->rhs);
    case Nd::cond: return (is_flonum(e->cond->ty) ? eval_double(e->cond) != 0 : eval(e->cond) != 0) ? eval_double(e->then) : eval_double(e->els);
    default: error_at(e->loc, "initializer element is not constant");
  }
}

}  // namespace kernelc
