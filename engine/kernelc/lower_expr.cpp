// Pass 4b: expressions to libgccjit. Expressions are built as libgccjit trees in the
// current block; anything with a side effect (assignment, ++/--, the arms of && || ?:)
// is emitted as statements at the point C sequences it, so a tree never hides an
// ordering that C defines.
#include <cstring>

#include "kernelc/lower.hpp"
#include "kernelc/parser.hpp"
#include "kernelc/walk.hpp"

namespace kernelc {

gcc_jit_lvalue* Lowerer::element(gcc_jit_rvalue* ptr, gcc_jit_rvalue* index, Loc l) {
  return gcc_jit_context_new_array_access(ctx, jloc(l), ptr, index);
}

// &a[0] for an array lvalue (a VLA is already its pointer).
gcc_jit_rvalue* Lowerer::decay(Node* a) {
  if (a->kind == Nd::str) return gcc_jit_context_new_string_literal(ctx, a->str.c_str());
  if (a->kind == Nd::var && a->var->is_vla) return gcc_jit_lvalue_as_rvalue(lv(a));
  gcc_jit_lvalue* arr = lv(a);
  return gcc_jit_lvalue_get_address(element(gcc_jit_lvalue_as_rvalue(arr), long_val(0), a->loc), jloc(a->loc));
}

// v[i] on a vector: through its address, as an array of its lanes.
gcc_jit_lvalue* Lowerer::vector_element(Node* n) {
  Node* v = n->lhs;
  gcc_jit_lvalue* base;
  bool is_lvalue = v->kind == Nd::var || v->kind == Nd::deref || v->kind == Nd::member || v->kind == Nd::compound_lit ||
                   v->kind == Nd::vec_index || subst.count(v);
  if (is_lvalue) {
    base = lv(v);
  } else {
    base = temp(type(v->ty), "vec");
    assign(base, rv(v), n->loc);
  }
  gcc_jit_type* lane_ptr = gcc_jit_type_get_pointer(type(v->ty->base));
  gcc_jit_rvalue* p = gcc_jit_context_new_cast(ctx, nullptr, gcc_jit_lvalue_get_address(base, nullptr), lane_ptr);
  return element(p, rv(n->rhs), n->loc);
}

gcc_jit_lvalue* Lowerer::lv(Node* n) {
  auto s = subst.find(n);
  if (s != subst.end()) return s->second;
  switch (n->kind) {
    case Nd::var: {
      if (f) {
        auto it = f->vars.find(n->var);
        if (it != f->vars.end()) return it->second;
      }
      if (!n->var->is_local) {
        declare_global(n->var);
        return globals[n->var];
      }
      error_at(n->loc, "'" + n->var->name + "' is not available here");
    }
    case Nd::deref: {
      Node* p = n->lhs;
      if ((p->kind == Nd::add || p->kind == Nd::sub) && p->ty->kind == Ty::ptr) {
        gcc_jit_rvalue* idx = rv(p->rhs);
        if (p->kind == Nd::sub) idx = gcc_jit_context_new_unary_op(ctx, nullptr, GCC_JIT_UNARY_OP_MINUS, prim(GCC_JIT_TYPE_LONG), idx);
        Node* base = p->lhs;
        if (base->kind == Nd::cast && base->lhs->ty->kind == Ty::array && !(base->lhs->kind == Nd::var && base->lhs->var->is_vla) && base->lhs->kind != Nd::str)
          return element(gcc_jit_lvalue_as_rvalue(lv(base->lhs)), idx, n->loc);  // a[i] on an array object
        return element(rv(base), idx, n->loc);
      }
      return gcc_jit_rvalue_dereference(rv(p), jloc(n->loc));
    }
    case Nd::member: {
      Type* st = n->lhs->ty->origin ? n->lhs->ty->origin : n->lhs->ty;
      type(st);
      if (n->lhs->kind == Nd::call || n->lhs->kind == Nd::cond || n->lhs->kind == Nd::comma || n->lhs->kind == Nd::assign) {
        gcc_jit_lvalue* t = temp(type(st), "struct");
        assign(t, rv(n->lhs), n->loc);
        return gcc_jit_lvalue_access_field(t, jloc(n->loc), n->mem->jit);
      }
      return gcc_jit_lvalue_access_field(lv(n->lhs), jloc(n->loc), n->mem->jit);
    }
    case Nd::vec_index: return vector_element(n);
    case Nd::compound_lit: {
      gcc_jit_lvalue* t = temp(type(n->ty), "literal");
      init_local(t, n->init_list, n->ty, n->loc);
      return t;
    }
    default: error_at(n->loc, "lvalue required");
  }
}

gcc_jit_rvalue* Lowerer::binary(Node* n) {
  gcc_jit_rvalue* a = rv(n->lhs);
  gcc_jit_rvalue* b = rv(n->rhs);
  gcc_jit_location* loc = jloc(n->loc);
  if (n->ty->kind == Ty::ptr) {  // p + i, p - i
    if (n->kind == Nd::sub) b = gcc_jit_context_new_unary_op(ctx, loc, GCC_JIT_UNARY_OP_MINUS, prim(GCC_JIT_TYPE_LONG), b);
    return gcc_jit_lvalue_get_address(element(a, b, n->loc), loc);
  }
  enum gcc_jit_binary_op op;
  switch (n->kind) {
    case Nd::add: op = GCC_JIT_BINARY_OP_PLUS; break;
    case Nd::sub: op = GCC_JIT_BINARY_OP_MINUS; break;
    case Nd::mul: op = GCC_JIT_BINARY_OP_MULT; break;
    case Nd::div: op = GCC_JIT_BINARY_OP_DIVIDE; break;
    case Nd::mod: op = GCC_JIT_BINARY_OP_MODULO; break;
    case Nd::band: op = GCC_JIT_BINARY_OP_BITWISE_AND; break;
    case Nd::bor: op = GCC_JIT_BINARY_OP_BITWISE_OR; break;
    case Nd::bxor: op = GCC_JIT_BINARY_OP_BITWISE_XOR; break;
    case Nd::shl: op = GCC_JIT_BINARY_OP_LSHIFT; break;
    case Nd::shr: op = GCC_JIT_BINARY_OP_RSHIFT; break;
    default: {
      enum gcc_jit_comparison c = n->kind == Nd::eq ? GCC_JIT_COMPARISON_EQ : n->kind == Nd::ne ? GCC_JIT_COMPARISON_NE
                                  : n->kind == Nd::lt ? GCC_JIT_COMPARISON_LT : GCC_JIT_COMPARISON_LE;
      return gcc_jit_context_new_cast(ctx, loc, gcc_jit_context_new_comparison(ctx, loc, c, a, b), prim(GCC_JIT_TYPE_INT));
    }
  }
  return gcc_jit_context_new_binary_op(ctx, loc, op, type(n->ty), a, b);
}

// && and ||: the right side runs only when it must.
gcc_jit_rvalue* Lowerer::logical(Node* n) {
  gcc_jit_lvalue* t = temp(prim(GCC_JIT_TYPE_INT), "logic");
  gcc_jit_block* yes = new_block("true");
  gcc_jit_block* no = new_block("false");
  gcc_jit_block* end = new_block("logic.end");
  cond_jump(n, yes, no);
  set_block(yes);
  assign(t, gcc_jit_context_one(ctx, prim(GCC_JIT_TYPE_INT)), n->loc);
  jump(end, n->loc);
  set_block(no);
  assign(t, gcc_jit_context_zero(ctx, prim(GCC_JIT_TYPE_INT)), n->loc);
  jump(end, n->loc);
  set_block(end);
  return gcc_jit_lvalue_as_rvalue(t);
}

gcc_jit_rvalue* Lowerer::conditional(Node* n) {
  gcc_jit_block* yes = new_block("cond.then");
  gcc_jit_block* no = new_block("cond.else");
  gcc_jit_block* end = new_block("cond.end");
  bool has_value = n->ty->kind != Ty::void_;
  gcc_jit_lvalue* t = has_value ? temp(type(n->ty), "cond") : nullptr;
  cond_jump(n->cond, yes, no);
  set_block(yes);
  if (has_value) assign(t, rv(n->then), n->loc);
  else effect(n->then);
  jump(end, n->loc);
  set_block(no);
  if (has_value) assign(t, rv(n->els), n->loc);
  else effect(n->els);
  jump(end, n->loc);
  set_block(end);
  return has_value ? gcc_jit_lvalue_as_rvalue(t) : nullptr;
}

// Library functions gcc knows as builtins are called as builtins, so the optimizer
// treats them as gcc does (sqrt inline, memset expanded, malloc's result not aliased).
gcc_jit_function* Lowerer::library_function(Obj* fn) {
  static const std::set<std::string> builtins = {
      "sqrt", "fabs", "exp", "log", "pow", "sin", "cos", "tan", "floor", "ceil", "round", "trunc", "fmod",
      "fma", "fmin", "fmax", "copysign", "sqrtf", "fabsf", "fmaf", "fminf", "fmaxf", "exp2", "log2",
      "log10", "log1p", "expm1", "atan", "atan2", "asin", "acos", "sinh", "cosh", "tanh", "hypot",
      "cbrt", "rint", "nearbyint", "fdim", "ldexp", "erf", "erfc", "lround", "lrint", "abs", "labs",
      "memset", "memcpy", "memmove", "malloc", "calloc", "free", "realloc"};
  externals.insert(fn->name);
  if (builtins.count(fn->name)) return gcc_jit_context_get_builtin_function(ctx, ("__builtin_" + fn->name).c_str());
  auto& imp = imported[fn->name];
  if (!imp) {
    std::vector<gcc_jit_param*> ps;
    for (size_t i = 0; i < fn->ty->params.size(); i++)
      ps.push_back(gcc_jit_context_new_param(ctx, nullptr, type(fn->ty->params[i]), ("p" + std::to_string(i)).c_str()));
    imp = gcc_jit_context_new_function(ctx, nullptr, GCC_JIT_FUNCTION_IMPORTED, type(fn->ty->ret), fn->name.c_str(),
                                       (int)ps.size(), ps.data(), fn->ty->variadic || fn->ty->old_style);
  }
  return imp;
}

gcc_jit_rvalue* Lowerer::call(Node* n) {
  gcc_jit_location* loc = jloc(n->loc);
  std::vector<gcc_jit_rvalue*> args;
  for (Node* a : n->args) args.push_back(rv(a));
  if (!n->var) {
    // __builtin_prefetch, __builtin_unreachable, __builtin_trap
    gcc_jit_function* b = gcc_jit_context_get_builtin_function(ctx, n->str.c_str());
    if (n->str == "__builtin_prefetch") {
      std::vector<gcc_jit_rvalue*> a = {args[0], args[1], args[2]};
      return gcc_jit_context_new_call(ctx, loc, b, 3, a.data());
    }
    return gcc_jit_context_new_call(ctx, loc, b, 0, nullptr);
  }
  Obj* fn = n->var;
  gcc_jit_function* g = fn->is_definition ? declare(fn) : library_function(fn);
  if (!fn->is_definition) {
    // the builtin's own parameter types may differ in qualifiers or width
    int np = gcc_jit_function_get_param_count(g);
    for (int i = 0; i < np && i < (int)args.size(); i++) {
      gcc_jit_type* pt = gcc_jit_rvalue_get_type(gcc_jit_param_as_rvalue(gcc_jit_function_get_param(g, i)));
      if (gcc_jit_rvalue_get_type(args[i]) != pt) args[i] = gcc_jit_context_new_cast(ctx, loc, args[i], pt);
    }
    gcc_jit_rvalue* c = gcc_jit_context_new_call(ctx, loc, g, (int)args.size(), args.data());
    gcc_jit_type* rt = gcc_jit_function_get_return_type(g);
    if (n->ty->kind != Ty::void_ && rt != type(n->ty)) c = gcc_jit_context_new_cast(ctx, loc, c, type(n->ty));
    return c;
  }
  return gcc_jit_context_new_call(ctx, loc, g, (int)args.size(), args.data());
}

// =, op=, ++, --. `want`: the value is used, so it is kept in a temporary.
gcc_jit_rvalue* Lowerer::assign_expr(Node* n, bool want) {
  gcc_jit_lvalue* dst = lv(n->lhs);
  gcc_jit_lvalue* old = nullptr;
  gcc_jit_rvalue* v;
  if (n->kind == Nd::assign) {
    v = rv(n->rhs);
  } else {
    // op=, ++, --: the right side reads the target through `subst`, evaluated once.
    subst[n->lhs] = dst;
    if (want && (n->kind == Nd::post_inc || n->kind == Nd::post_dec)) {
      old = temp(type(n->ty), "old");
      assign(old, gcc_jit_lvalue_as_rvalue(dst), n->loc);
    }
    v = rv(n->rhs);
    subst.erase(n->lhs);
  }
  if (!want) {
    assign(dst, v, n->loc);
    return nullptr;
  }
  gcc_jit_lvalue* t = temp(type(n->ty), "val");
  assign(t, v, n->loc);
  assign(dst, gcc_jit_lvalue_as_rvalue(t), n->loc);
  return gcc_jit_lvalue_as_rvalue(old ? old : t);
}

void Lowerer::effect(Node* n) {
  switch (n->kind) {
    case Nd::assign: case Nd::op_assign: case Nd::pre_inc: case Nd::pre_dec: case Nd::post_inc: case Nd::post_dec:
      assign_expr(n, false);
      return;
    case Nd::comma:
      effect(n->lhs);
      effect(n->rhs);
      return;
    case Nd::cast:
      if (n->ty->kind == Ty::void_) return effect(n->lhs);
      break;
    case Nd::cond:
      conditional(n);
      return;
    case Nd::num: case Nd::fnum: case Nd::var: case Nd::str: return;
    default: break;
  }
  gcc_jit_rvalue* v = rv(n);
  if (v) eval(v, n->loc);
}

gcc_jit_rvalue* Lowerer::rv(Node* n) {
  auto s = subst.find(n);
  if (s != subst.end()) return gcc_jit_lvalue_as_rvalue(s->second);
  gcc_jit_location* loc = jloc(n->loc);
  switch (n->kind) {
    case Nd::num:
      if (n->ty->kind == Ty::ptr) return gcc_jit_context_new_bitcast(ctx, loc, long_val(n->ival), type(n->ty));
      return gcc_jit_context_new_rvalue_from_long(ctx, type(n->ty), n->ival);
    case Nd::fnum: return gcc_jit_context_new_rvalue_from_double(ctx, type(n->ty), n->fval);
    case Nd::str: return gcc_jit_context_new_string_literal(ctx, n->str.c_str());
    case Nd::var: case Nd::deref: case Nd::member: case Nd::vec_index: case Nd::compound_lit:
      return gcc_jit_lvalue_as_rvalue(lv(n));
    case Nd::add: case Nd::sub: case Nd::mul: case Nd::div: case Nd::mod: case Nd::band: case Nd::bor:
    case Nd::bxor: case Nd::shl: case Nd::shr: case Nd::eq: case Nd::ne: case Nd::lt: case Nd::le:
      return binary(n);
    case Nd::ptr_diff: {
      gcc_jit_rvalue* a = gcc_jit_context_new_bitcast(ctx, loc, rv(n->lhs), prim(GCC_JIT_TYPE_LONG));
      gcc_jit_rvalue* b = gcc_jit_context_new_bitcast(ctx, loc, rv(n->rhs), prim(GCC_JIT_TYPE_LONG));
      gcc_jit_rvalue* d = gcc_jit_context_new_binary_op(ctx, loc, GCC_JIT_BINARY_OP_MINUS, prim(GCC_JIT_TYPE_LONG), a, b);
      int64_t sz = std::max<int64_t>(n->lhs->ty->base->size, 1);
      return gcc_jit_context_new_binary_op(ctx, loc, GCC_JIT_BINARY_OP_DIVIDE, prim(GCC_JIT_TYPE_LONG), d, long_val(sz));
    }
    case Nd::land: case Nd::lor: return logical(n);
    case Nd::lnot: {
      gcc_jit_rvalue* t = truth(rv(n->lhs), n->lhs->ty, n->loc);
      return gcc_jit_context_new_cast(ctx, loc, gcc_jit_context_new_unary_op(ctx, loc, GCC_JIT_UNARY_OP_LOGICAL_NEGATE, prim(GCC_JIT_TYPE_BOOL), t), prim(GCC_JIT_TYPE_INT));
    }
    case Nd::bnot: return gcc_jit_context_new_unary_op(ctx, loc, GCC_JIT_UNARY_OP_BITWISE_NEGATE, type(n->ty), rv(n->lhs));
    case Nd::neg: return gcc_jit_context_new_unary_op(ctx, loc, GCC_JIT_UNARY_OP_MINUS, type(n->ty), rv(n->lhs));
    case Nd::assign: case Nd::op_assign: case Nd::pre_inc: case Nd::pre_dec: case Nd::post_inc: case Nd::post_dec:
      return assign_expr(n, true);
    case Nd::addr:
      if (n->lhs->kind == Nd::deref && !subst.count(n->lhs)) {
        Node* p = n->lhs->lhs;
        if (!((p->kind == Nd::add || p->kind == Nd::sub) && p->ty->kind == Ty::ptr)) return cast(rv(p), p->ty, n->ty, n->loc);
      }
      if (n->lhs->ty->kind == Ty::array && n->lhs->kind == Nd::var && n->lhs->var->is_vla) return rv(n->lhs);
      return gcc_jit_lvalue_get_address(lv(n->lhs), loc);
    case Nd::cond: return conditional(n);
    case Nd::comma:
      effect(n->lhs);
      return rv(n->rhs);
    case Nd::call: return call(n);
    case Nd::cast: {
      if (n->lhs->ty->kind == Ty::array) {
        gcc_jit_rvalue* p = decay(n->lhs);
        return gcc_jit_context_new_cast(ctx, loc, p, type(n->ty));
      }
      gcc_jit_rvalue* v = rv(n->lhs);
      if (n->ty->kind == Ty::void_) {
        eval(v, n->loc);
        return nullptr;
      }
      if (n->lhs->ty->kind == Ty::ptr && n->ty->kind == Ty::ptr) return gcc_jit_context_new_cast(ctx, loc, v, type(n->ty));
      return cast(v, n->lhs->ty, n->ty, n->loc);
    }
    case Nd::vec_lit: {
      std::vector<gcc_jit_rvalue*> vals;
      for (Node* a : n->args) vals.push_back(rv(a));
      return gcc_jit_context_new_rvalue_from_vector(ctx, loc, type(n->ty), vals.size(), vals.data());
    }
    default: break;
  }
  error_at(n->loc, "expression expected");
}

}  // namespace kernelc
