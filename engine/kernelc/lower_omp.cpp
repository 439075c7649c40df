// Pass 4c: OpenMP onto libgomp, the way gcc lowers it.
//
//   #pragma omp parallel        -> the region becomes a function taking a pointer to a
//                                  struct of captured variables; GOMP_parallel runs it on
//                                  the team (the calling thread included)
//   #pragma omp for             -> the iteration space [0, n) of the (collapsed) loop
//                                  nest is split: static by arithmetic on the thread
//                                  number, dynamic/guided through GOMP_loop_*_start/next
//   reduction(op: x)            -> a private partial per thread, combined under
//                                  GOMP_atomic_start/end
//   critical, atomic, single, master, barrier -> the matching GOMP_* calls
//
// Captures: a variable the region only reads is copied in (so the optimizer sees a
// local, as gcc's own lowering arranges); one it writes or whose address escapes is
// shared through a pointer.
//
// One file over 600 lines: every directive is outlined through the same capture struct
// and team calls, so their lowerings are read together.
#include "kernelc/lower.hpp"
#include "kernelc/walk.hpp"

namespace kernelc {

namespace {

struct Capture {
  Obj* var;
  bool by_ref;
  gcc_jit_field* field = nullptr;
};

bool contains(const std::vector<Obj*>& v, const Obj* o) { return std::find(v.begin(), v.end(), o) != v.end(); }

bool is_reduction(const OmpClauses* c, const Obj* o) {
  for (auto& r : c->reductions)
    if (r.var == o) return true;
  return false;
}

Node* strip_casts(Node* n) {
  while (n && n->kind == Nd::cast && is_integer(n->ty)) n = n->lhs;
  return n;
}

bool is_var(Node* n, Obj* v) {
  n = strip_casts(n);
  return n && n->kind == Nd::var && n->var == v;
}

// One loop of an OpenMP loop nest in canonical form: for (v = lb; v <op> ub; v += step).
struct Canon {
  Obj* var = nullptr;
  Node* lb = nullptr;
  Node* ub = nullptr;
  Node* step = nullptr;   // as written; `negate` when it is subtracted
  int64_t unit = 0;       // ++ (1) or -- (-1) instead of `step`
  bool negate = false;
  bool up = true;         // v < ub or v <= ub
  bool inclusive = false; // <= or >=
  bool not_equal = false;
  Node* loop = nullptr;
};

Canon canonical(Node* loop) {
  Canon c;
  c.loop = loop;
  auto bad = [&](const char* what) { error_at(loop->loc, std::string("invalid ") + what + " in OpenMP 'for' loop"); };
  Node* init = loop->init;
  if (!init) bad("initialization");
  if (init->kind == Nd::block) {
    if (init->stmts.size() != 1 || init->stmts[0]->kind != Nd::decl || !init->stmts[0]->init_list || !init->stmts[0]->init_list->expr)
      bad("initialization");
    c.var = init->stmts[0]->var;
    c.lb = init->stmts[0]->init_list->expr;
  } else if (init->kind == Nd::expr_stmt && init->lhs->kind == Nd::assign && init->lhs->lhs->kind == Nd::var) {
    c.var = init->lhs->lhs->var;
    c.lb = init->lhs->rhs;
  } else {
    bad("initialization");
  }
  if (!is_integer(c.var->ty)) unsupported_at(loop->loc, "OpenMP loops over non-integer variables");
  Node* cond = loop->cond;
  if (!cond) bad("controlling predicate");
  if (cond->kind == Nd::lt || cond->kind == Nd::le) {
    c.inclusive = cond->kind == Nd::le;
    if (is_var(cond->lhs, c.var)) { c.up = true; c.ub = cond->rhs; }
    else if (is_var(cond->rhs, c.var)) { c.up = false; c.ub = cond->lhs; }
    else bad("controlling predicate");
  } else if (cond->kind == Nd::ne) {
    c.not_equal = true;
    if (is_var(cond->lhs, c.var)) c.ub = cond->rhs;
    else if (is_var(cond->rhs, c.var)) c.ub = cond->lhs;
    else bad("controlling predicate");
  } else {
    bad("controlling predicate");
  }
  Node* inc = loop->inc ? loop->inc->lhs : nullptr;
  if (!inc) bad("increment expression");
  if ((inc->kind == Nd::pre_inc || inc->kind == Nd::post_inc) && is_var(inc->lhs, c.var)) c.unit = 1;
  else if ((inc->kind == Nd::pre_dec || inc->kind == Nd::post_dec) && is_var(inc->lhs, c.var)) c.unit = -1;
  else if ((inc->kind == Nd::op_assign || inc->kind == Nd::assign) && is_var(inc->lhs, c.var)) {
    Node* r = strip_casts(inc->rhs);
    if (r->kind == Nd::add && is_var(r->lhs, c.var)) c.step = r->rhs;
    else if (r->kind == Nd::add && is_var(r->rhs, c.var)) c.step = r->lhs;
    else if (r->kind == Nd::sub && is_var(r->lhs, c.var)) { c.step = r->rhs; c.negate = true; }
    else bad("increment expression");
  } else {
    bad("increment expression");
  }
  if (c.not_equal) {
    if (!c.unit) unsupported_at(loop->loc, "'!=' loop conditions with a non-unit step");
    c.up = c.unit > 0;
  }
  return c;
}

bool references(Node* n, const Obj* v) {
  bool found = false;
  walk(n, [&](Node* x) {
    if (x->kind == Nd::var && x->var == v) found = true;
    return !found;
  });
  return found;
}

}  // namespace

gcc_jit_rvalue* Lowerer::thread_num(Loc l) {
  return gcc_jit_context_new_cast(ctx, nullptr, call_import("omp_get_thread_num", prim(GCC_JIT_TYPE_INT), {}, {}, l), prim(GCC_JIT_TYPE_LONG));
}

gcc_jit_rvalue* Lowerer::num_threads(Loc l) {
  return gcc_jit_context_new_cast(ctx, nullptr, call_import("omp_get_num_threads", prim(GCC_JIT_TYPE_INT), {}, {}, l), prim(GCC_JIT_TYPE_LONG));
}

static gcc_jit_rvalue* reduction_identity(Lowerer& L, const std::string& op, Type* t) {
  gcc_jit_type* jt = L.type(t);
  if (op == "*" || op == "&&") return gcc_jit_context_one(L.ctx, jt);
  if (op == "&") return gcc_jit_context_new_unary_op(L.ctx, nullptr, GCC_JIT_UNARY_OP_BITWISE_NEGATE, jt, gcc_jit_context_zero(L.ctx, jt));
  if (op == "max" || op == "min") {
    bool mx = op == "max";
    if (is_flonum(t)) return gcc_jit_context_new_rvalue_from_double(L.ctx, jt, mx ? -HUGE_VAL : HUGE_VAL);
    int64_t bits = t->size * 8;
    if (is_unsigned(t)) return mx ? gcc_jit_context_zero(L.ctx, jt) : gcc_jit_context_new_unary_op(L.ctx, nullptr, GCC_JIT_UNARY_OP_BITWISE_NEGATE, jt, gcc_jit_context_zero(L.ctx, jt));
    int64_t v = bits == 64 ? (mx ? INT64_MIN : INT64_MAX) : (mx ? -((int64_t)1 << (bits - 1)) : ((int64_t)1 << (bits - 1)) - 1);
    return gcc_jit_context_new_rvalue_from_long(L.ctx, jt, v);
  }
  return gcc_jit_context_zero(L.ctx, jt);
}

// dst = dst op part, under libgomp's global atomic lock.
static void reduction_combine(Lowerer& L, const std::string& op, Type* t, gcc_jit_lvalue* dst, gcc_jit_rvalue* part, Loc l) {
  gcc_jit_type* jt = L.type(t);
  gcc_jit_rvalue* cur = gcc_jit_lvalue_as_rvalue(dst);
  L.eval(L.call_import("GOMP_atomic_start", L.prim(GCC_JIT_TYPE_VOID), {}, {}, l), l);
  if (op == "max" || op == "min") {
    gcc_jit_block* take = L.new_block("red.take");
    gcc_jit_block* done = L.new_block("red.done");
    gcc_jit_rvalue* better = gcc_jit_context_new_comparison(L.ctx, nullptr, op == "max" ? GCC_JIT_COMPARISON_GT : GCC_JIT_COMPARISON_LT, part, cur);
    L.end_cond(L.f->cur, nullptr, better, take, done);
    L.set_block(take);
    L.assign(dst, part, l);
    L.end_jump(L.f->cur, nullptr, done);
    L.set_block(done);
  } else if (op == "&&" || op == "||") {
    gcc_jit_rvalue* a = L.truth(cur, t, l);
    gcc_jit_rvalue* b = L.truth(part, t, l);
    gcc_jit_rvalue* r = gcc_jit_context_new_binary_op(L.ctx, nullptr, op == "&&" ? GCC_JIT_BINARY_OP_LOGICAL_AND : GCC_JIT_BINARY_OP_LOGICAL_OR, L.prim(GCC_JIT_TYPE_BOOL), a, b);
    L.assign(dst, gcc_jit_context_new_cast(L.ctx, nullptr, r, jt), l);
  } else {
    enum gcc_jit_binary_op b = op == "*" ? GCC_JIT_BINARY_OP_MULT : op == "&" ? GCC_JIT_BINARY_OP_BITWISE_AND
                               : op == "|" ? GCC_JIT_BINARY_OP_BITWISE_OR : op == "^" ? GCC_JIT_BINARY_OP_BITWISE_XOR
                                           : GCC_JIT_BINARY_OP_PLUS;
    L.assign(dst, gcc_jit_context_new_binary_op(L.ctx, nullptr, b, jt, cur, part), l);
  }
  L.eval(L.call_import("GOMP_atomic_end", L.prim(GCC_JIT_TYPE_VOID), {}, {}, l), l);
}

void Lowerer::omp(Node* n) {
  OmpClauses* c = n->omp;
  Loc l = n->loc;
  gcc_jit_type* void_t = prim(GCC_JIT_TYPE_VOID);
  switch (c->kind) {
    case OmpKind::parallel: case OmpKind::parallel_for: return omp_parallel(n);
    case OmpKind::for_: return omp_for(n, c, n->body);
    case OmpKind::simd: return stmt(n->body);
    case OmpKind::barrier:
      return eval(call_import("GOMP_barrier", void_t, {}, {}, l), l);
    case OmpKind::taskwait: return;
    case OmpKind::flush:
      eval(call_import("GOMP_atomic_start", void_t, {}, {}, l), l);
      eval(call_import("GOMP_atomic_end", void_t, {}, {}, l), l);
      return;
    case OmpKind::critical: {
      if (c->critical_name.empty()) {
        eval(call_import("GOMP_critical_start", void_t, {}, {}, l), l);
        stmt(n->body);
        eval(call_import("GOMP_critical_end", void_t, {}, {}, l), l);
        return;
      }
      gcc_jit_lvalue*& g = critical_names[c->critical_name];
      if (!g) g = gcc_jit_context_new_global(ctx, nullptr, GCC_JIT_GLOBAL_INTERNAL, prim(GCC_JIT_TYPE_VOID_PTR), ("gomp_critical_user_" + c->critical_name).c_str());
      gcc_jit_type* pp = gcc_jit_type_get_pointer(prim(GCC_JIT_TYPE_VOID_PTR));
      gcc_jit_rvalue* a = gcc_jit_lvalue_get_address(g, nullptr);
      eval(call_import("GOMP_critical_name_start", void_t, {pp}, {a}, l), l);
      stmt(n->body);
      a = gcc_jit_lvalue_get_address(g, nullptr);
      eval(call_import("GOMP_critical_name_end", void_t, {pp}, {a}, l), l);
      return;
    }
    case OmpKind::atomic:
      eval(call_import("GOMP_atomic_start", void_t, {}, {}, l), l);
      stmt(n->body);
      eval(call_import("GOMP_atomic_end", void_t, {}, {}, l), l);
      return;
    case OmpKind::single: {
      gcc_jit_block* run = new_block("single");
      gcc_jit_block* done = new_block("single.done");
      gcc_jit_rvalue* mine = call_import("GOMP_single_start", prim(GCC_JIT_TYPE_BOOL), {}, {}, l);
      end_cond(f->cur, jloc(l), mine, run, done);
      set_block(run);
      stmt(n->body);
      end_jump(f->cur, nullptr, done);
      set_block(done);
      if (!c->nowait) eval(call_import("GOMP_barrier", void_t, {}, {}, l), l);
      return;
    }
    case OmpKind::master: {
      gcc_jit_block* run = new_block("master");
      gcc_jit_block* done = new_block("master.done");
      gcc_jit_rvalue* is0 = gcc_jit_context_new_comparison(ctx, nullptr, GCC_JIT_COMPARISON_EQ, thread_num(l), long_val(0));
      end_cond(f->cur, jloc(l), is0, run, done);
      set_block(run);
      stmt(n->body);
      end_jump(f->cur, nullptr, done);
      set_block(done);
      return;
    }
    default: unsupported_at(l, "'#pragma omp " + c->directive + "'");
  }
}

void Lowerer::omp_parallel(Node* n) {
  OmpClauses* c = n->omp;
  Loc l = n->loc;
  bool combined = c->kind == OmpKind::parallel_for;
  if (!c->lastpriv.empty() && !combined) error_at(l, "'lastprivate' is not valid for '#pragma omp parallel'");

  // Loop variables of a combined construct are private.
  std::vector<Obj*> loop_vars;
  if (combined) {
    Node* cur = n->body;
    for (int k = 0; k < c->collapse && cur && cur->kind == Nd::for_; k++) {
      loop_vars.push_back(canonical(cur).var);
      Node* b = cur->body;
      while (b && b->kind == Nd::block && b->stmts.size() == 1) b = b->stmts[0];
      cur = b;
    }
  }

  // What the region uses from outside, and how.
  std::vector<Obj*> used;
  std::set<const Obj*> written;
  walk(n->body, [&](Node* x) {
    if (x->kind == Nd::var && x->var->is_local && f->vars.count(x->var) && !contains(used, x->var)) used.push_back(x->var);
    if (x->kind == Nd::assign || x->kind == Nd::op_assign || x->kind == Nd::pre_inc || x->kind == Nd::pre_dec ||
        x->kind == Nd::post_inc || x->kind == Nd::post_dec || x->kind == Nd::addr) {
      if (Obj* r = root_var(x->lhs)) written.insert(r);
    }
    return true;
  });
  for (auto* list : {&c->priv, &c->firstpriv, &c->lastpriv, &c->shared})
    for (Obj* v : *list) {
      if (!v->is_local) unsupported_at(l, "OpenMP data-sharing clauses on global variable '" + v->name + "'");
      if (!f->vars.count(v)) error_at(l, "'" + v->name + "' is not visible at this OpenMP directive");
      if (!contains(used, v)) used.push_back(v);
    }
  for (auto& r : c->reductions) {
    if (!r.var->is_local) unsupported_at(r.loc, "reductions on global variable '" + r.var->name + "'");
    if (!f->vars.count(r.var)) error_at(r.loc, "'" + r.var->name + "' is not visible at this OpenMP directive");
    if (!contains(used, r.var)) used.push_back(r.var);
  }

  std::vector<Capture> caps;
  std::vector<gcc_jit_field*> fields;
  for (Obj* v : used) {
    if (contains(c->priv, v) || (contains(loop_vars, v) && !contains(c->lastpriv, v))) continue;
    bool by_ref;
    if (contains(c->firstpriv, v)) by_ref = false;
    else if (is_reduction(c, v) || contains(c->lastpriv, v)) by_ref = true;
    else by_ref = v->ty->kind == Ty::array ? !v->is_vla : (written.count(v) || v->address_taken);
    Capture cap{v, by_ref};
    gcc_jit_type* ft = by_ref ? gcc_jit_type_get_pointer(type(v->ty)) : type(v->ty);
    cap.field = gcc_jit_context_new_field(ctx, nullptr, ft, (v->name + "." + std::to_string(v->id)).c_str());
    fields.push_back(cap.field);
    caps.push_back(cap);
  }
  int id = omp_fns++;
  std::string sname = "omp_data_" + std::to_string(id);
  if (fields.empty())
    fields.push_back(gcc_jit_context_new_field(ctx, nullptr, prim(GCC_JIT_TYPE_INT), "unused"));
  gcc_jit_struct* st = gcc_jit_context_new_struct_type(ctx, nullptr, sname.c_str(), (int)fields.size(), fields.data());
  gcc_jit_type* stt = gcc_jit_struct_as_type(st);

  // The outlined function.
  gcc_jit_param* dp = gcc_jit_context_new_param(ctx, nullptr, prim(GCC_JIT_TYPE_VOID_PTR), "omp_data_i");
  std::string fname = f->src->name + "_omp_fn_" + std::to_string(id);
  gcc_jit_function* ofn = gcc_jit_context_new_function(ctx, jloc(l), GCC_JIT_FUNCTION_INTERNAL, prim(GCC_JIT_TYPE_VOID), fname.c_str(), 1, &dp, 0);

  // In the parent: fill the struct, run the team.
  gcc_jit_lvalue* data = temp(stt, "omp_data_o");
  for (auto& cap : caps) {
    gcc_jit_lvalue* src = f->vars[cap.var];
    gcc_jit_rvalue* val = cap.by_ref ? gcc_jit_lvalue_get_address(src, nullptr) : gcc_jit_lvalue_as_rvalue(src);
    assign(gcc_jit_lvalue_access_field(data, nullptr, cap.field), val, l);
  }
  gcc_jit_rvalue* nt = c->num_threads ? gcc_jit_context_new_cast(ctx, nullptr, rv(c->num_threads), prim(GCC_JIT_TYPE_UNSIGNED_INT))
                                      : gcc_jit_context_zero(ctx, prim(GCC_JIT_TYPE_UNSIGNED_INT));
  if (c->if_clause) {
    gcc_jit_lvalue* t = temp(prim(GCC_JIT_TYPE_UNSIGNED_INT), "nthreads");
    assign(t, nt, l);
    gcc_jit_block* serial = new_block("omp.serial");
    gcc_jit_block* go = new_block("omp.go");
    cond_jump(c->if_clause, go, serial);
    set_block(serial);
    assign(t, gcc_jit_context_one(ctx, prim(GCC_JIT_TYPE_UNSIGNED_INT)), l);
    end_jump(f->cur, nullptr, go);
    set_block(go);
    nt = gcc_jit_lvalue_as_rvalue(t);
  }
  gcc_jit_type* vp = prim(GCC_JIT_TYPE_VOID_PTR);
  gcc_jit_type* ui = prim(GCC_JIT_TYPE_UNSIGNED_INT);
  gcc_jit_rvalue* fnp = gcc_jit_context_new_bitcast(ctx, nullptr, gcc_jit_function_get_address(ofn, nullptr), vp);
  gcc_jit_rvalue* dptr = gcc_jit_context_new_cast(ctx, nullptr, gcc_jit_lvalue_get_address(data, nullptr), vp);
  eval(call_import("GOMP_parallel", prim(GCC_JIT_TYPE_VOID), {vp, vp, ui, ui}, {fnp, dptr, nt, gcc_jit_context_zero(ctx, ui)}, l), l);

  // The region's body, in its own function.
  FnCtx region;
  region.fn = ofn;
  region.src = f->src;
  region.outlined = true;
  FnCtx* parent = f;
  f = &region;
  f->cur = new_block("entry");
  gcc_jit_rvalue* in = gcc_jit_context_new_cast(ctx, nullptr, gcc_jit_param_as_rvalue(dp), gcc_jit_type_get_pointer(stt));
  gcc_jit_lvalue* inp = temp(gcc_jit_type_get_pointer(stt), "omp_data_i");
  assign(inp, in, l);
  std::vector<std::pair<Obj*, gcc_jit_lvalue*>> reductions;  // var, shared target
  for (auto& cap : caps) {
    gcc_jit_rvalue* fv = gcc_jit_lvalue_as_rvalue(gcc_jit_rvalue_dereference_field(gcc_jit_lvalue_as_rvalue(inp), nullptr, cap.field));
    std::string nm = cap.var->name;
    if (cap.by_ref) {
      gcc_jit_lvalue* p = gcc_jit_function_new_local(ofn, nullptr, gcc_jit_type_get_pointer(type(cap.var->ty)), (nm + ".ref").c_str());
      assign(p, fv, l);
      f->vars[cap.var] = gcc_jit_rvalue_dereference(gcc_jit_lvalue_as_rvalue(p), nullptr);
    } else {
      gcc_jit_lvalue* v = gcc_jit_function_new_local(ofn, nullptr, type(cap.var->ty), nm.c_str());
      assign(v, fv, l);
      f->vars[cap.var] = v;
    }
  }
  for (Obj* v : used)
    if (contains(c->priv, v) || (contains(loop_vars, v) && !contains(c->lastpriv, v)))
      f->vars[v] = gcc_jit_function_new_local(ofn, nullptr, type(v->ty), v->name.c_str());
  for (auto& r : c->reductions) {
    gcc_jit_lvalue* shared = f->vars[r.var];
    gcc_jit_lvalue* part = gcc_jit_function_new_local(ofn, nullptr, type(r.var->ty), (r.var->name + ".part").c_str());
    assign(part, reduction_identity(*this, r.op, r.var->ty), r.loc);
    f->vars[r.var] = part;
    reductions.push_back({r.var, shared});
  }
  if (combined) {
    omp_for(n, c, n->body);
  } else {
    stmt(n->body);
  }
  for (size_t i = 0; i < reductions.size(); i++)
    reduction_combine(*this, c->reductions[i].op, reductions[i].first->ty, reductions[i].second,
                      gcc_jit_lvalue_as_rvalue(f->vars[reductions[i].first]), c->reductions[i].loc);
  end_void(f->cur, nullptr);
  for (auto& [name, b] : f->labels)
    if (!f->placed.count(name)) error_at(l, "invalid branch to/from OpenMP structured block");
  finish_blocks();
  f = parent;
}

void Lowerer::omp_for(Node* n, OmpClauses* c, Node* nest) {
  Loc l = n->loc;
  bool combined = c->kind == OmpKind::parallel_for;
  gcc_jit_type* lt = prim(GCC_JIT_TYPE_LONG);
  auto L = [&](gcc_jit_lvalue* x) { return gcc_jit_lvalue_as_rvalue(x); };
  auto bin = [&](enum gcc_jit_binary_op op, gcc_jit_rvalue* a, gcc_jit_rvalue* b) { return gcc_jit_context_new_binary_op(ctx, nullptr, op, lt, a, b); };
  auto local = [&](const char* what, gcc_jit_rvalue* init) {
    gcc_jit_lvalue* t = temp(lt, what);
    if (init) assign(t, init, l);
    return t;
  };
  // x = cond ? a : b, with blocks
  auto select = [&](gcc_jit_lvalue* x, gcc_jit_rvalue* cond, gcc_jit_rvalue* a, gcc_jit_rvalue* b) {
    gcc_jit_block* ya = new_block("sel.a");
    gcc_jit_block* yb = new_block("sel.b");
    gcc_jit_block* done = new_block("sel.done");
    end_cond(f->cur, nullptr, cond, ya, yb);
    set_block(ya);
    assign(x, a, l);
    end_jump(f->cur, nullptr, done);
    set_block(yb);
    assign(x, b, l);
    end_jump(f->cur, nullptr, done);
    set_block(done);
  };
  auto cmp = [&](enum gcc_jit_comparison op, gcc_jit_rvalue* a, gcc_jit_rvalue* b) { return gcc_jit_context_new_comparison(ctx, nullptr, op, a, b); };

  // The loop nest.
  std::vector<Canon> loops;
  Node* cur = nest;
  for (int k = 0; k < c->collapse; k++) {
    if (!cur || cur->kind != Nd::for_) error_at(cur ? cur->loc : l, "not enough perfectly nested loops for 'collapse'");
    loops.push_back(canonical(cur));
    if (k + 1 < c->collapse) {
      Node* b = cur->body;
      while (b && b->kind == Nd::block && b->stmts.size() == 1) b = b->stmts[0];
      if (b && b->kind == Nd::omp && b->omp->kind == OmpKind::simd) b = b->body;
      cur = b;
    }
  }
  for (size_t k = 1; k < loops.size(); k++)
    for (size_t j = 0; j < k; j++)
      if (references(loops[k].lb, loops[j].var) || references(loops[k].ub, loops[j].var) || (loops[k].step && references(loops[k].step, loops[j].var)))
        unsupported_at(loops[k].loop->loc, "non-rectangular loop nests under 'collapse'");

  // Bounds, steps and trip counts, once, in long.
  std::vector<gcc_jit_lvalue*> lbs, steps, counts;
  gcc_jit_lvalue* total = nullptr;
  for (auto& lp : loops) {
    gcc_jit_lvalue* lb = local("lb", gcc_jit_context_new_cast(ctx, nullptr, rv(lp.lb), lt));
    gcc_jit_lvalue* ub = local("ub", gcc_jit_context_new_cast(ctx, nullptr, rv(lp.ub), lt));
    gcc_jit_rvalue* sv = lp.unit ? long_val(lp.unit) : gcc_jit_context_new_cast(ctx, nullptr, rv(lp.step), lt);
    if (lp.negate) sv = gcc_jit_context_new_unary_op(ctx, nullptr, GCC_JIT_UNARY_OP_MINUS, lt, sv);
    gcc_jit_lvalue* st = local("step", sv);
    gcc_jit_lvalue* cnt = temp(lt, "count");
    if (lp.up) {
      // (ub - lb + step - 1) / step, or (ub - lb) / step + 1 for <=
      gcc_jit_rvalue* span = lp.inclusive || lp.not_equal ? bin(GCC_JIT_BINARY_OP_MINUS, L(ub), L(lb))
                                                          : bin(GCC_JIT_BINARY_OP_MINUS, bin(GCC_JIT_BINARY_OP_PLUS, bin(GCC_JIT_BINARY_OP_MINUS, L(ub), L(lb)), L(st)), long_val(1));
      gcc_jit_rvalue* q = bin(GCC_JIT_BINARY_OP_DIVIDE, span, L(st));
      if (lp.inclusive) q = bin(GCC_JIT_BINARY_OP_PLUS, q, long_val(1));
      select(cnt, cmp(lp.inclusive ? GCC_JIT_COMPARISON_GE : GCC_JIT_COMPARISON_GT, L(ub), L(lb)), q, long_val(0));
    } else {
      gcc_jit_rvalue* neg = gcc_jit_context_new_unary_op(ctx, nullptr, GCC_JIT_UNARY_OP_MINUS, lt, L(st));
      gcc_jit_rvalue* span = lp.inclusive || lp.not_equal ? bin(GCC_JIT_BINARY_OP_MINUS, L(lb), L(ub))
                                                          : bin(GCC_JIT_BINARY_OP_MINUS, bin(GCC_JIT_BINARY_OP_PLUS, bin(GCC_JIT_BINARY_OP_MINUS, L(lb), L(ub)), neg), long_val(1));
      gcc_jit_rvalue* q = bin(GCC_JIT_BINARY_OP_DIVIDE, span, neg);
      if (lp.inclusive) q = bin(GCC_JIT_BINARY_OP_PLUS, q, long_val(1));
      select(cnt, cmp(lp.inclusive ? GCC_JIT_COMPARISON_GE : GCC_JIT_COMPARISON_GT, L(lb), L(ub)), q, long_val(0));
    }
    lbs.push_back(lb);
    steps.push_back(st);
    counts.push_back(cnt);
    total = total ? local("total", bin(GCC_JIT_BINARY_OP_MULT, L(total), L(cnt))) : cnt;
  }

  // Privates of this construct (a combined construct made them at the region).
  std::vector<std::pair<const Obj*, gcc_jit_lvalue*>> saved;
  auto privatize = [&](Obj* v) {
    saved.push_back({v, f->vars.count(v) ? f->vars[v] : nullptr});
    gcc_jit_lvalue* p = gcc_jit_function_new_local(f->fn, nullptr, type(v->ty), v->name.c_str());
    f->vars[v] = p;
    return p;
  };
  for (auto& lp : loops) {
    if (contains(c->lastpriv, lp.var)) continue;
    privatize(lp.var);
  }
  std::vector<std::pair<OmpClauses::Reduction, gcc_jit_lvalue*>> reductions;
  if (!combined) {
    for (Obj* v : c->priv) privatize(v);
    for (Obj* v : c->firstpriv) {
      gcc_jit_lvalue* outer = f->vars.count(v) ? f->vars[v] : nullptr;
      if (!outer) error_at(l, "'" + v->name + "' is not visible at this OpenMP directive");
      gcc_jit_lvalue* p = privatize(v);
      assign(p, L(outer), l);
    }
    for (auto& r : c->reductions) {
      gcc_jit_lvalue* outer = f->vars.count(r.var) ? f->vars[r.var] : (r.var->is_local ? nullptr : (declare_global(r.var), globals[r.var]));
      if (!outer) error_at(r.loc, "'" + r.var->name + "' is not visible at this OpenMP directive");
      gcc_jit_lvalue* p = privatize(r.var);
      assign(p, reduction_identity(*this, r.op, r.var->ty), r.loc);
      reductions.push_back({r, outer});
    }
  }
  std::vector<std::pair<Obj*, gcc_jit_lvalue*>> lastprivs;  // var, shared target
  for (Obj* v : c->lastpriv) {
    gcc_jit_lvalue* outer = f->vars.count(v) ? f->vars[v] : nullptr;
    if (!outer) error_at(l, "'" + v->name + "' is not visible at this OpenMP directive");
    privatize(v);
    lastprivs.push_back({v, outer});
  }

  // Runs iterations [from, to) of the flattened space.
  Node* body = loops.back().loop->body;
  auto run_chunk = [&](gcc_jit_rvalue* from, gcc_jit_rvalue* to) {
    gcc_jit_lvalue* iv = local("iv", from);
    gcc_jit_lvalue* end = local("iv.end", to);
    gcc_jit_block* head = new_block("omp.cond");
    gcc_jit_block* blk = new_block("omp.body");
    gcc_jit_block* next = new_block("omp.next");
    gcc_jit_block* done = new_block("omp.done");
    end_jump(f->cur, nullptr, head);
    set_block(head);
    end_cond(f->cur, nullptr, cmp(GCC_JIT_COMPARISON_LT, L(iv), L(end)), blk, done);
    set_block(blk);
    gcc_jit_rvalue* rem = L(iv);
    for (size_t k = loops.size(); k-- > 0;) {
      gcc_jit_rvalue* idx = k == 0 ? rem : bin(GCC_JIT_BINARY_OP_MODULO, rem, L(counts[k]));
      if (k > 0) {
        gcc_jit_lvalue* r = local("rem", bin(GCC_JIT_BINARY_OP_DIVIDE, rem, L(counts[k])));
        gcc_jit_lvalue* ix = local("idx", idx);
        idx = L(ix);
        rem = L(r);
      }
      gcc_jit_rvalue* val = bin(GCC_JIT_BINARY_OP_PLUS, L(lbs[k]), bin(GCC_JIT_BINARY_OP_MULT, idx, L(steps[k])));
      assign(f->vars[loops[k].var], gcc_jit_context_new_cast(ctx, nullptr, val, type(loops[k].var->ty)), l);
    }
    f->breaks.push_back(nullptr);
    f->continues.push_back(next);
    stmt(body);
    f->breaks.pop_back();
    f->continues.pop_back();
    end_jump(f->cur, nullptr, next);
    set_block(next);
    assign(iv, bin(GCC_JIT_BINARY_OP_PLUS, L(iv), long_val(1)), l);
    end_jump(f->cur, nullptr, head);
    set_block(done);
    if (!lastprivs.empty()) {
      // the thread that ran the last iteration publishes its privates
      gcc_jit_block* pub = new_block("lastprivate");
      gcc_jit_block* after = new_block("lastprivate.done");
      gcc_jit_rvalue* ran_last = gcc_jit_context_new_binary_op(ctx, nullptr, GCC_JIT_BINARY_OP_LOGICAL_AND, prim(GCC_JIT_TYPE_BOOL),
                                                               cmp(GCC_JIT_COMPARISON_EQ, L(end), L(total)), cmp(GCC_JIT_COMPARISON_GT, L(end), from));
      end_cond(f->cur, nullptr, ran_last, pub, after);
      set_block(pub);
      for (auto& [v, outer] : lastprivs) {
        bool is_loop_var = false;
        for (size_t k = 0; k < loops.size(); k++)
          if (loops[k].var == v) {
            is_loop_var = true;
            gcc_jit_rvalue* fin = bin(GCC_JIT_BINARY_OP_PLUS, L(lbs[k]), bin(GCC_JIT_BINARY_OP_MULT, L(counts[k]), L(steps[k])));
            assign(outer, gcc_jit_context_new_cast(ctx, nullptr, fin, type(v->ty)), l);
          }
        if (!is_loop_var) assign(outer, L(f->vars[v]), l);
      }
      end_jump(f->cur, nullptr, after);
      set_block(after);
    }
  };

  std::string sched = c->schedule;
  if (sched == "auto" || sched == "runtime") sched = "static";
  gcc_jit_lvalue* tid = local("tid", thread_num(l));
  gcc_jit_lvalue* nth = local("nthreads", num_threads(l));
  if (sched == "static" && !c->chunk) {
    // one contiguous block per thread; the first (total % nthreads) get one more
    gcc_jit_lvalue* q = local("q", bin(GCC_JIT_BINARY_OP_DIVIDE, L(total), L(nth)));
    gcc_jit_lvalue* r = local("r", bin(GCC_JIT_BINARY_OP_MODULO, L(total), L(nth)));
    gcc_jit_lvalue* start = temp(lt, "start");
    gcc_jit_lvalue* size = temp(lt, "size");
    gcc_jit_rvalue* few = cmp(GCC_JIT_COMPARISON_LT, L(tid), L(r));
    select(size, few, bin(GCC_JIT_BINARY_OP_PLUS, L(q), long_val(1)), L(q));
    select(start, few, bin(GCC_JIT_BINARY_OP_MULT, L(tid), bin(GCC_JIT_BINARY_OP_PLUS, L(q), long_val(1))),
           bin(GCC_JIT_BINARY_OP_PLUS, bin(GCC_JIT_BINARY_OP_MULT, L(tid), L(q)), L(r)));
    run_chunk(L(start), bin(GCC_JIT_BINARY_OP_PLUS, L(start), L(size)));
  } else if (sched == "static") {
    // round-robin chunks
    gcc_jit_lvalue* ch = local("chunk", gcc_jit_context_new_cast(ctx, nullptr, rv(c->chunk), lt));
    select(ch, cmp(GCC_JIT_COMPARISON_LT, L(ch), long_val(1)), long_val(1), L(ch));
    gcc_jit_lvalue* s = local("s", bin(GCC_JIT_BINARY_OP_MULT, L(tid), L(ch)));
    gcc_jit_block* head = new_block("chunk.cond");
    gcc_jit_block* blk = new_block("chunk.body");
    gcc_jit_block* done = new_block("chunk.done");
    end_jump(f->cur, nullptr, head);
    set_block(head);
    end_cond(f->cur, nullptr, cmp(GCC_JIT_COMPARISON_LT, L(s), L(total)), blk, done);
    set_block(blk);
    gcc_jit_lvalue* e = local("e", bin(GCC_JIT_BINARY_OP_PLUS, L(s), L(ch)));
    select(e, cmp(GCC_JIT_COMPARISON_GT, L(e), L(total)), L(total), L(e));
    run_chunk(L(s), L(e));
    assign(s, bin(GCC_JIT_BINARY_OP_PLUS, L(s), bin(GCC_JIT_BINARY_OP_MULT, L(nth), L(ch))), l);
    end_jump(f->cur, nullptr, head);
    set_block(done);
  } else {
    // dynamic and guided: libgomp hands out chunks
    std::string start_fn = "GOMP_loop_" + sched + "_start", next_fn = "GOMP_loop_" + sched + "_next";
    gcc_jit_rvalue* chv = c->chunk ? gcc_jit_context_new_cast(ctx, nullptr, rv(c->chunk), lt) : long_val(1);
    gcc_jit_lvalue* is = temp(lt, "istart");
    gcc_jit_lvalue* ie = temp(lt, "iend");
    gcc_jit_type* lp = gcc_jit_type_get_pointer(lt);
    gcc_jit_type* bt = prim(GCC_JIT_TYPE_BOOL);
    gcc_jit_lvalue* more = temp(bt, "more");
    assign(more, call_import(start_fn.c_str(), bt, {lt, lt, lt, lt, lp, lp},
                             {long_val(0), L(total), long_val(1), chv, gcc_jit_lvalue_get_address(is, nullptr), gcc_jit_lvalue_get_address(ie, nullptr)}, l), l);
    gcc_jit_block* head = new_block("dyn.cond");
    gcc_jit_block* blk = new_block("dyn.body");
    gcc_jit_block* done = new_block("dyn.done");
    end_jump(f->cur, nullptr, head);
    set_block(head);
    end_cond(f->cur, nullptr, L(more), blk, done);
    set_block(blk);
    run_chunk(L(is), L(ie));
    assign(more, call_import(next_fn.c_str(), bt, {lp, lp}, {gcc_jit_lvalue_get_address(is, nullptr), gcc_jit_lvalue_get_address(ie, nullptr)}, l), l);
    end_jump(f->cur, nullptr, head);
    set_block(done);
    eval(call_import("GOMP_loop_end_nowait", prim(GCC_JIT_TYPE_VOID), {}, {}, l), l);
  }

  for (auto& [r, outer] : reductions) reduction_combine(*this, r.op, r.var->ty, outer, L(f->vars[r.var]), r.loc);
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->second) f->vars[it->first] = it->second;
    else f->vars.erase(it->first);
  }
  if (!combined && !c->nowait) eval(call_import("GOMP_barrier", prim(GCC_JIT_TYPE_VOID), {}, {}, l), l);
}

}  // namespace kernelc
