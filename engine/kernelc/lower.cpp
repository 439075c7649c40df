// Pass 4a: types, functions, globals and statements to libgccjit (expressions are
// lower_expr.cpp's, OpenMP lower_omp.cpp's).
#include "kernelc/lower.hpp"

#include <cstring>

#include "kernelc/parser.hpp"
#include "kernelc/walk.hpp"

namespace kernelc {

// ---- types and helpers -----------------------------------------------------------------

gcc_jit_type* Lowerer::type(Type* t) {
  if (t->origin && t->kind != Ty::vector) return type(t->origin);
  if (t->jit) return t->jit;
  gcc_jit_type* r = nullptr;
  switch (t->kind) {
    case Ty::void_: r = prim(GCC_JIT_TYPE_VOID); break;
    case Ty::bool_: r = prim(GCC_JIT_TYPE_BOOL); break;
    case Ty::char_: r = prim(GCC_JIT_TYPE_CHAR); break;
    case Ty::schar: r = prim(GCC_JIT_TYPE_SIGNED_CHAR); break;
    case Ty::uchar: r = prim(GCC_JIT_TYPE_UNSIGNED_CHAR); break;
    case Ty::short_: r = prim(GCC_JIT_TYPE_SHORT); break;
    case Ty::ushort: r = prim(GCC_JIT_TYPE_UNSIGNED_SHORT); break;
    case Ty::int_: case Ty::enum_: r = prim(GCC_JIT_TYPE_INT); break;
    case Ty::uint: r = prim(GCC_JIT_TYPE_UNSIGNED_INT); break;
    case Ty::long_: r = prim(GCC_JIT_TYPE_LONG); break;
    case Ty::ulong: r = prim(GCC_JIT_TYPE_UNSIGNED_LONG); break;
    case Ty::llong: r = prim(GCC_JIT_TYPE_LONG_LONG); break;
    case Ty::ullong: r = prim(GCC_JIT_TYPE_UNSIGNED_LONG_LONG); break;
    case Ty::float_: r = prim(GCC_JIT_TYPE_FLOAT); break;
    case Ty::double_: r = prim(GCC_JIT_TYPE_DOUBLE); break;
    case Ty::ldouble: r = prim(GCC_JIT_TYPE_LONG_DOUBLE); break;
    case Ty::ptr: r = gcc_jit_type_get_pointer(type(t->base)); break;
    case Ty::array:
      if (t->len == -2) r = gcc_jit_type_get_pointer(type(t->base));
      else r = gcc_jit_context_new_array_type(ctx, nullptr, type(t->base), (int)std::max<int64_t>(t->len, 0));
      break;
    case Ty::vector: {
      r = gcc_jit_type_get_vector(type(t->base), (size_t)t->len);
      if (t->unaligned) r = gcc_jit_type_get_aligned(r, (size_t)std::max<int64_t>(t->align, t->base->size));
      break;
    }
    case Ty::struct_: case Ty::union_: {
      std::vector<gcc_jit_field*> fields;
      for (Member* m : t->members) {
        m->jit = gcc_jit_context_new_field(ctx, nullptr, type(m->ty), m->name.c_str());
        fields.push_back(m->jit);
      }
      std::string tag = t->tag.empty() ? "anon" : t->tag;
      if (t->kind == Ty::struct_) {
        t->jit_struct = gcc_jit_context_new_struct_type(ctx, nullptr, tag.c_str(), (int)fields.size(), fields.data());
        r = gcc_jit_struct_as_type(t->jit_struct);
      } else {
        r = gcc_jit_context_new_union_type(ctx, nullptr, tag.c_str(), (int)fields.size(), fields.data());
      }
      break;
    }
    case Ty::func: r = prim(GCC_JIT_TYPE_VOID_PTR); break;
  }
  t->jit = r;
  return r;
}

gcc_jit_location* Lowerer::jloc(Loc l) {
  if (!l.line) return nullptr;
  return gcc_jit_context_new_location(ctx, l.file, l.line, l.col);
}

gcc_jit_block* Lowerer::new_block(const char* what) {
  std::string name = std::string(what) + "." + std::to_string(f->blocks++);
  gcc_jit_block* b = gcc_jit_function_new_block(f->fn, name.c_str());
  f->all.push_back(b);
  return b;
}

void Lowerer::finish_blocks() {
  // Unreachable leftovers (after a return or a jump) still need a terminator.
  Type* rt = f->outlined ? nullptr : f->src->ty->ret;
  for (gcc_jit_block* b : f->all) {
    if (f->ended.count(b)) continue;
    if (!rt || rt->kind == Ty::void_) {
      end_void(b, nullptr);
    } else {
      gcc_jit_lvalue* t = temp(type(rt), "unreached");
      end_return(b, nullptr, gcc_jit_lvalue_as_rvalue(t));
    }
  }
}

gcc_jit_lvalue* Lowerer::temp(gcc_jit_type* t, const char* what) {
  std::string name = std::string("__") + what + "." + std::to_string(f->temps++);
  return gcc_jit_function_new_local(f->fn, nullptr, t, name.c_str());
}

gcc_jit_rvalue* Lowerer::long_val(int64_t v) { return gcc_jit_context_new_rvalue_from_long(ctx, prim(GCC_JIT_TYPE_LONG), v); }

void Lowerer::jump(gcc_jit_block* to, Loc l) {
  end_jump(f->cur, jloc(l), to);
  f->cur = new_block("dead");  // what follows a jump is unreachable until a label
}

gcc_jit_rvalue* Lowerer::truth(gcc_jit_rvalue* v, Type* t, Loc l) {
  if (t->kind == Ty::bool_) return v;
  gcc_jit_rvalue* zero = t->kind == Ty::ptr ? gcc_jit_context_null(ctx, type(t)) : gcc_jit_context_zero(ctx, type(t));
  return gcc_jit_context_new_comparison(ctx, jloc(l), GCC_JIT_COMPARISON_NE, v, zero);
}

// C's conversions, where libgccjit's cast does not reach (pointers and integers,
// to _Bool, between vectors of one size).
gcc_jit_rvalue* Lowerer::cast(gcc_jit_rvalue* v, Type* from, Type* to, Loc l) {
  gcc_jit_location* loc = jloc(l);
  if (to->kind == Ty::void_) return v;
  if (to->kind == Ty::bool_) {
    if (from->kind == Ty::bool_) return v;
    return truth(v, from, l);
  }
  if (from->kind == Ty::vector || to->kind == Ty::vector) {
    if (type(from) == type(to)) return v;
    return gcc_jit_context_new_bitcast(ctx, loc, v, type(to));
  }
  if (to->kind == Ty::ptr && is_integer(from)) {
    gcc_jit_rvalue* w = gcc_jit_context_new_cast(ctx, loc, v, prim(GCC_JIT_TYPE_LONG));
    return gcc_jit_context_new_bitcast(ctx, loc, w, type(to));
  }
  if (is_integer(to) && from->kind == Ty::ptr) {
    gcc_jit_rvalue* w = gcc_jit_context_new_bitcast(ctx, loc, v, prim(GCC_JIT_TYPE_LONG));
    return gcc_jit_context_new_cast(ctx, loc, w, type(to));
  }
  if (type(from) == type(to)) return v;
  return gcc_jit_context_new_cast(ctx, loc, v, type(to));
}

gcc_jit_rvalue* Lowerer::call_import(const char* name, gcc_jit_type* ret, std::vector<gcc_jit_type*> params,
                                     std::vector<gcc_jit_rvalue*> args, Loc l) {
  gcc_jit_function*& fn = imported[name];
  if (!fn) {
    std::vector<gcc_jit_param*> ps;
    for (size_t i = 0; i < params.size(); i++)
      ps.push_back(gcc_jit_context_new_param(ctx, nullptr, params[i], ("p" + std::to_string(i)).c_str()));
    fn = gcc_jit_context_new_function(ctx, nullptr, GCC_JIT_FUNCTION_IMPORTED, ret, name, (int)ps.size(), ps.data(), 0);
    externals.insert(name);
  }
  return gcc_jit_context_new_call(ctx, jloc(l), fn, (int)args.size(), args.data());
}

// ---- functions and globals --------------------------------------------------------------

gcc_jit_function* Lowerer::declare(Obj* fn) {
  auto it = funcs.find(fn);
  if (it != funcs.end()) return it->second;
  Type* ft = fn->ty;
  std::vector<gcc_jit_param*> ps;
  for (size_t i = 0; i < ft->params.size(); i++) {
    std::string name = i < fn->params.size() && !fn->params[i]->name.empty() ? fn->params[i]->name : "p" + std::to_string(i);
    ps.push_back(gcc_jit_context_new_param(ctx, jloc(fn->loc), type(ft->params[i]), name.c_str()));
  }
  enum gcc_jit_function_kind kind = fn->always_inline ? GCC_JIT_FUNCTION_ALWAYS_INLINE
                                    : fn->is_static   ? GCC_JIT_FUNCTION_INTERNAL
                                                      : GCC_JIT_FUNCTION_EXPORTED;
  gcc_jit_function* g = gcc_jit_context_new_function(ctx, jloc(fn->loc), kind, type(ft->ret), fn->name.c_str(),
                                                     (int)ps.size(), ps.data(), 0);
  funcs[fn] = g;
  return g;
}

gcc_jit_rvalue* Lowerer::const_init(Initializer* in, Type* ty) {
  Type* t = ty->origin ? ty->origin : ty;
  if (!in) {
    if (is_arith(t)) return gcc_jit_context_zero(ctx, type(t));
    if (t->kind == Ty::ptr) return gcc_jit_context_null(ctx, type(t));
    if (t->kind == Ty::array) return gcc_jit_context_new_array_constructor(ctx, nullptr, type(t), 0, nullptr);
    if (t->kind == Ty::struct_) return gcc_jit_context_new_struct_constructor(ctx, nullptr, type(t), 0, nullptr, nullptr);
    unsupported_at(Loc{}, "static initializer of type '" + type_name(t) + "'");
  }
  if (in->expr) {
    Node* e = in->expr;
    if (!Parser::is_constant(e)) error_at(e->loc, "initializer element is not constant");
    if (is_flonum(t)) return gcc_jit_context_new_rvalue_from_double(ctx, type(t), Parser::eval_double(e));
    if (t->kind == Ty::ptr) return gcc_jit_context_new_bitcast(ctx, nullptr, long_val(Parser::eval(e)), type(t));
    return gcc_jit_context_new_rvalue_from_long(ctx, type(t), Parser::eval(e));
  }
  if (t->kind == Ty::array) {
    std::vector<gcc_jit_rvalue*> vals;
    for (Initializer* c : in->children) vals.push_back(const_init(c, t->base));
    return gcc_jit_context_new_array_constructor(ctx, nullptr, type(t), (int)vals.size(), vals.data());
  }
  if (t->kind == Ty::struct_) {
    std::vector<gcc_jit_rvalue*> vals;
    std::vector<gcc_jit_field*> fields;
    type(t);
    for (size_t i = 0; i < in->children.size(); i++) {
      vals.push_back(const_init(in->children[i], t->members[i]->ty));
      fields.push_back(t->members[i]->jit);
    }
    return gcc_jit_context_new_struct_constructor(ctx, nullptr, type(t), (int)vals.size(), fields.data(), vals.data());
  }
  unsupported_at(in->expr ? in->expr->loc : Loc{}, "static initializer of type '" + type_name(t) + "'");
}

void Lowerer::declare_global(Obj* v) {
  if (globals.count(v)) return;
  std::string name = v->is_static ? v->name + "_" + std::to_string(v->id) : v->name;
  gcc_jit_lvalue* g = gcc_jit_context_new_global(ctx, jloc(v->loc), v->is_static ? GCC_JIT_GLOBAL_INTERNAL : GCC_JIT_GLOBAL_EXPORTED,
                                                 type(v->ty), name.c_str());
  if (v->align) gcc_jit_lvalue_set_alignment(g, (unsigned)v->align);
  globals[v] = g;
  if (v->init) {
    FnCtx* saved = f;
    f = nullptr;  // constant trees need no block
    gcc_jit_global_set_initializer_rvalue(g, const_init(v->init, v->ty));
    f = saved;
  }
}

void Lowerer::define(Obj* src) {
  gcc_jit_function* fn = declare(src);
  FnCtx ctxf;
  ctxf.fn = fn;
  ctxf.src = src;
  FnCtx* saved = f;
  f = &ctxf;
  for (size_t i = 0; i < src->params.size(); i++)
    f->vars[src->params[i]] = gcc_jit_param_as_lvalue(gcc_jit_function_get_param(fn, (int)i));
  f->cur = new_block("entry");
  stmt(src->body);
  Type* rt = src->ty->ret;
  if (rt->kind == Ty::void_) {
    end_void(f->cur, nullptr);
  } else {
    // falling off the end: C leaves the value unspecified
    gcc_jit_lvalue* t = temp(type(rt), "noreturn");
    end_return(f->cur, nullptr, gcc_jit_lvalue_as_rvalue(t));
  }
  for (auto& [name, b] : f->labels)
    if (!f->placed.count(name)) error_at(src->loc, "label '" + name + "' is outside this OpenMP region or function");
  finish_blocks();
  f = saved;
}

void Lowerer::program(const std::string& entry) {
  Obj* main = nullptr;
  for (Obj* o : prog.globals)
    if (o->is_function && o->name == entry && o->is_definition && !o->from_prelude) main = o;
  if (!main) throw Error(Status::compile_error, Loc{"kernel.c", 1, 1}, "no definition of the entry function '" + entry + "'");
  if (main->is_static) error_at(main->loc, "the entry function '" + entry + "' must not be static");
  // Every kernel function is compiled (gcc would diagnose them all); prelude helpers
  // only when reached.
  std::vector<Obj*> work;
  std::set<Obj*> seen;
  for (Obj* o : prog.globals)
    if (o->is_function && o->is_definition && !o->from_prelude && seen.insert(o).second) work.push_back(o);
  for (size_t i = 0; i < work.size(); i++) {
    walk(work[i]->body, [&](Node* n) {
      if (n->kind == Nd::call && n->var && n->var->is_definition && seen.insert(n->var).second) work.push_back(n->var);
      if (n->kind == Nd::var && !n->var->is_local && !n->var->is_function) declare_global(n->var);
      return true;
    });
  }
  for (Obj* o : prog.globals)
    if (!o->is_function && !o->from_prelude && o->is_definition && !o->is_local) declare_global(o);
  for (Obj* fn : work) declare(fn);
  for (Obj* fn : work) define(fn);
}

// ---- statements -----------------------------------------------------------------------

void Lowerer::init_local(gcc_jit_lvalue* dst, Initializer* in, Type* ty, Loc l) {
  Type* t = ty->origin && ty->kind != Ty::vector ? ty->origin : ty;
  if (in->expr) {
    assign(dst, rv(in->expr), l);
    return;
  }
  if (t->kind == Ty::array) {
    int64_t n = t->len;
    if ((int64_t)in->children.size() < n) {
      // zero the whole array first, then store what is given
      gcc_jit_rvalue* addr = gcc_jit_context_new_cast(ctx, nullptr, gcc_jit_lvalue_get_address(dst, nullptr), prim(GCC_JIT_TYPE_VOID_PTR));
      gcc_jit_function* memset_fn = gcc_jit_context_get_builtin_function(ctx, "__builtin_memset");
      gcc_jit_rvalue* args[3] = {addr, gcc_jit_context_zero(ctx, prim(GCC_JIT_TYPE_INT)),
                                 gcc_jit_context_new_rvalue_from_long(ctx, prim(GCC_JIT_TYPE_SIZE_T), t->size)};
      eval(gcc_jit_context_new_call(ctx, jloc(l), memset_fn, 3, args), l);
    }
    for (size_t i = 0; i < in->children.size(); i++) {
      Initializer* c = in->children[i];
      if (c->expr && c->expr->kind == Nd::cast && c->expr->lhs->kind == Nd::num && c->expr->lhs->ival == 0 && (int64_t)in->children.size() < n)
        continue;  // already zero
      gcc_jit_lvalue* e = gcc_jit_context_new_array_access(ctx, jloc(l), gcc_jit_lvalue_as_rvalue(dst), long_val((int64_t)i));
      init_local(e, c, t->base, l);
    }
    return;
  }
  if (t->kind == Ty::struct_ || t->kind == Ty::union_) {
    type(t);
    if (in->children.size() < t->members.size() || t->kind == Ty::union_) {
      gcc_jit_rvalue* zero = gcc_jit_context_new_struct_constructor(ctx, nullptr, type(t), 0, nullptr, nullptr);
      if (t->kind == Ty::struct_) assign(dst, zero, l);
    }
    for (size_t i = 0; i < in->children.size(); i++)
      init_local(gcc_jit_lvalue_access_field(dst, jloc(l), t->members[i]->jit), in->children[i], t->members[i]->ty, l);
    return;
  }
  if (t->kind == Ty::vector) {
    std::vector<gcc_jit_rvalue*> vals;
    for (Initializer* c : in->children) vals.push_back(rv(c->expr));
    while ((int64_t)vals.size() < t->len) vals.push_back(gcc_jit_context_zero(ctx, type(t->base)));
    assign(dst, gcc_jit_context_new_rvalue_from_vector(ctx, jloc(l), type(t), vals.size(), vals.data()), l);
    return;
  }
  error_at(l, "invalid initializer");
}

void Lowerer::local_decl(Node* n) {
  Obj* v = n->var;
  std::string name = v->name.empty() ? "__tmp" : v->name;
  gcc_jit_lvalue* lvl = gcc_jit_function_new_local(f->fn, jloc(n->loc), type(v->ty), name.c_str());
  if (v->align) gcc_jit_lvalue_set_alignment(lvl, (unsigned)v->align);
  f->vars[v] = lvl;
  if (v->is_vla) {
    // storage from the stack, released when the function returns
    gcc_jit_rvalue* count = gcc_jit_context_new_cast(ctx, nullptr, rv(n->bound), prim(GCC_JIT_TYPE_SIZE_T));
    gcc_jit_rvalue* bytes = gcc_jit_context_new_binary_op(ctx, nullptr, GCC_JIT_BINARY_OP_MULT, prim(GCC_JIT_TYPE_SIZE_T), count,
                                                          gcc_jit_context_new_rvalue_from_long(ctx, prim(GCC_JIT_TYPE_SIZE_T), v->ty->base->size));
    gcc_jit_function* alloca_fn = gcc_jit_context_get_builtin_function(ctx, "__builtin_alloca");
    gcc_jit_rvalue* p = gcc_jit_context_new_call(ctx, jloc(n->loc), alloca_fn, 1, &bytes);
    assign(lvl, gcc_jit_context_new_cast(ctx, nullptr, p, type(v->ty)), n->loc);
    return;
  }
  if (n->init_list) init_local(lvl, n->init_list, v->ty, n->loc);
}

gcc_jit_block* Lowerer::label_block(const std::string& name) {
  gcc_jit_block*& b = f->labels[name];
  if (!b) {
    b = gcc_jit_function_new_block(f->fn, ("label." + name).c_str());
    f->all.push_back(b);
  }
  return b;
}

void Lowerer::cond_jump(Node* c, gcc_jit_block* yes, gcc_jit_block* no) {
  if (c->kind == Nd::land) {
    gcc_jit_block* mid = new_block("and");
    cond_jump(c->lhs, mid, no);
    set_block(mid);
    cond_jump(c->rhs, yes, no);
    return;
  }
  if (c->kind == Nd::lor) {
    gcc_jit_block* mid = new_block("or");
    cond_jump(c->lhs, yes, mid);
    set_block(mid);
    cond_jump(c->rhs, yes, no);
    return;
  }
  if (c->kind == Nd::lnot) return cond_jump(c->lhs, no, yes);
  gcc_jit_rvalue* v;
  if (c->kind == Nd::eq || c->kind == Nd::ne || c->kind == Nd::lt || c->kind == Nd::le) {
    gcc_jit_rvalue* a = rv(c->lhs);
    gcc_jit_rvalue* b = rv(c->rhs);
    enum gcc_jit_comparison op = c->kind == Nd::eq ? GCC_JIT_COMPARISON_EQ : c->kind == Nd::ne ? GCC_JIT_COMPARISON_NE
                                 : c->kind == Nd::lt ? GCC_JIT_COMPARISON_LT : GCC_JIT_COMPARISON_LE;
    v = gcc_jit_context_new_comparison(ctx, jloc(c->loc), op, a, b);
  } else {
    v = truth(rv(c), c->ty, c->loc);
  }
  end_cond(f->cur, jloc(c->loc), v, yes, no);
  f->cur = new_block("dead");
}

void Lowerer::if_stmt(Node* n) {
  gcc_jit_block* then = new_block("then");
  gcc_jit_block* els = n->els ? new_block("else") : nullptr;
  gcc_jit_block* end = new_block("endif");
  cond_jump(n->cond, then, els ? els : end);
  set_block(then);
  stmt(n->then);
  jump(end, n->loc);
  if (els) {
    set_block(els);
    stmt(n->els);
    jump(end, n->loc);
  }
  set_block(end);
}

void Lowerer::loop(Node* n) {
  gcc_jit_block* head = new_block("loop.cond");
  gcc_jit_block* body = new_block("loop.body");
  gcc_jit_block* next = new_block("loop.next");
  gcc_jit_block* end = new_block("loop.end");
  if (n->init) stmt(n->init);
  jump(n->kind == Nd::do_ ? body : head, n->loc);
  set_block(head);
  if (n->cond) cond_jump(n->cond, body, end);
  else jump(body, n->loc);
  set_block(body);
  f->breaks.push_back(end);
  f->continues.push_back(next);
  stmt(n->body);
  f->breaks.pop_back();
  f->continues.pop_back();
  jump(next, n->loc);
  set_block(next);
  if (n->inc) stmt(n->inc);
  jump(head, n->loc);
  set_block(end);
}

void Lowerer::switch_stmt(Node* n) {
  gcc_jit_rvalue* v = rv(n->cond);
  gcc_jit_lvalue* t = temp(type(n->cond->ty), "switch");
  assign(t, v, n->loc);
  gcc_jit_block* end = new_block("switch.end");
  std::vector<gcc_jit_case*> cases;
  for (Node* c : n->cases) {
    gcc_jit_block* b = new_block("case");
    f->labels["#case" + std::to_string((intptr_t)c)] = b;
    f->placed.insert("#case" + std::to_string((intptr_t)c));
    gcc_jit_rvalue* k = gcc_jit_context_new_rvalue_from_long(ctx, type(n->cond->ty), c->case_val);
    cases.push_back(gcc_jit_context_new_case(ctx, k, k, b));
  }
  gcc_jit_block* dflt = end;
  if (n->default_case) {
    dflt = new_block("default");
    f->labels["#case" + std::to_string((intptr_t)n->default_case)] = dflt;
    f->placed.insert("#case" + std::to_string((intptr_t)n->default_case));
  }
  end_switch(f->cur, jloc(n->loc), gcc_jit_lvalue_as_rvalue(t), dflt, (int)cases.size(), cases.data());
  f->cur = new_block("dead");
  f->breaks.push_back(end);
  stmt(n->body);
  f->breaks.pop_back();
  jump(end, n->loc);
  set_block(end);
}

void Lowerer::stmt(Node* n) {
  switch (n->kind) {
    case Nd::block:
      for (Node* s : n->stmts) stmt(s);
      return;
    case Nd::decl: return local_decl(n);
    case Nd::null_stmt: return;
    case Nd::expr_stmt: return effect(n->lhs);
    case Nd::if_: return if_stmt(n);
    case Nd::for_: case Nd::while_: case Nd::do_: return loop(n);
    case Nd::switch_: return switch_stmt(n);
    case Nd::case_: {
      gcc_jit_block* b = f->labels["#case" + std::to_string((intptr_t)n)];
      jump(b, n->loc);
      set_block(b);
      stmt(n->body);
      return;
    }
    case Nd::break_:
      if (f->breaks.empty() || !f->breaks.back()) error_at(n->loc, "break statement used with OpenMP for loop");
      return jump(f->breaks.back(), n->loc);
    case Nd::continue_:
      if (f->continues.empty()) error_at(n->loc, "continue statement not within a loop");
      return jump(f->continues.back(), n->loc);
    case Nd::goto_: return jump(label_block(n->str), n->loc);
    case Nd::label: {
      gcc_jit_block* b = label_block(n->str);
      f->placed.insert(n->str);
      jump(b, n->loc);
      set_block(b);
      stmt(n->body);
      return;
    }
    case Nd::return_: {
      if (f->outlined) error_at(n->loc, "invalid branch to/from OpenMP structured block");
      if (!n->lhs) {
        end_void(f->cur, jloc(n->loc));
      } else if (f->src->ty->ret->kind == Ty::void_) {
        effect(n->lhs);
        end_void(f->cur, jloc(n->loc));
      } else {
        end_return(f->cur, jloc(n->loc), rv(n->lhs));
      }
      f->cur = new_block("dead");
      return;
    }
    case Nd::omp: return omp(n);
    default: error_at(n->loc, "statement expected");
  }
}

}  // namespace kernelc
