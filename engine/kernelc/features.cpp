// Technique features, read from the syntax tree: what a kernel does, not what its
// comments or strings say.
#include <map>

#include "kernelc/walk.hpp"

namespace kernelc {

namespace {

using json = nlohmann::json;

struct Loop {
  Node* node;
  Obj* var = nullptr;
  int64_t step = 0;     // constant step, 0 when not constant
  bool symbolic_step = false;
  int depth = 0;
};

Obj* loop_var(Node* f) {
  Node* init = f->init;
  if (init && init->kind == Nd::block && init->stmts.size() == 1 && init->stmts[0]->kind == Nd::decl) return init->stmts[0]->var;
  if (init && init->kind == Nd::expr_stmt && init->lhs->kind == Nd::assign && init->lhs->lhs->kind == Nd::var) return init->lhs->lhs->var;
  if (f->cond && (f->cond->kind == Nd::lt || f->cond->kind == Nd::le)) {
    Node* a = f->cond->lhs;
    while (a->kind == Nd::cast) a = a->lhs;
    if (a->kind == Nd::var) return a->var;
  }
  return nullptr;
}

Node* strip(Node* n) {
  while (n && n->kind == Nd::cast) n = n->lhs;
  return n;
}

// The step of `v += s`, `v++`, `v = v + s`.
void loop_step(Node* f, Loop& l) {
  Node* inc = f->inc ? f->inc->lhs : nullptr;
  if (!inc) return;
  if (inc->kind == Nd::pre_inc || inc->kind == Nd::post_inc) { l.step = 1; return; }
  if (inc->kind == Nd::pre_dec || inc->kind == Nd::post_dec) { l.step = -1; return; }
  if (inc->kind == Nd::op_assign || inc->kind == Nd::assign) {
    Node* r = strip(inc->rhs);
    if (r && (r->kind == Nd::add || r->kind == Nd::sub)) {
      Node* s = strip(r->rhs);
      if (s->kind == Nd::num) l.step = r->kind == Nd::add ? s->ival : -s->ival;
      else if (s->kind == Nd::var) l.symbolic_step = true;
    }
  }
}

bool mentions(Node* n, const Obj* v) {
  bool found = false;
  if (!n || !v) return false;
  walk(n, [&](Node* x) {
    if (x->kind == Nd::var && x->var == v) found = true;
    return !found;
  });
  return found;
}

struct Scan {
  std::set<std::string> intrinsics, families, constructs, schedules, reductions;
  int width = 0, collapse = 0, prefetches = 0, accumulators = 0, unroll = 0;
  bool vector_types = false, num_threads = false;
  std::vector<std::string> orders;
  json blocked = json::array();
  std::set<const Obj*> blocked_vars;

  void vector_width(Type* t) {
    if (t && t->kind == Ty::vector) {
      vector_types = true;
      width = std::max<int>(width, (int)t->len);
    }
  }

  void call(Node* n) {
    if (!n->var) {
      if (n->str == "__builtin_prefetch") prefetches++;
      return;
    }
    const std::string& name = n->var->name;
    if (!n->var->from_prelude || name.rfind("_mm", 0) != 0) return;
    if (name == "_mm_malloc" || name == "_mm_free") return;
    intrinsics.insert(name);
    if (name.rfind("_mm512_", 0) == 0) families.insert("avx512");
    else if (name.rfind("_mm256_", 0) == 0) families.insert(name.find("fmadd") != std::string::npos || name.find("fmsub") != std::string::npos ? "fma" : "avx2");
    else if (name.find("fmadd") != std::string::npos || name.find("fmsub") != std::string::npos) families.insert("fma");
    else families.insert("sse2");
    vector_width(n->ty);
    for (Node* a : n->args) vector_width(a->ty);
  }

  void omp(Node* n) {
    OmpClauses* c = n->omp;
    constructs.insert(c->directive);
    if (c->schedule_given) schedules.insert(c->schedule);
    collapse = std::max(collapse, c->collapse);
    for (auto& r : c->reductions) reductions.insert(r.op);
    if (c->num_threads) num_threads = true;
  }

  // Independent accumulators updated in the innermost loop body: locals (scalars,
  // vectors or local arrays of them) declared outside that loop.
  void accumulate(Node* loop) {
    std::set<std::string> acc;
    std::set<const Obj*> inside;
    walk(loop->body, [&](Node* x) {
      if (x->kind == Nd::decl) inside.insert(x->var);
      return true;
    });
    walk(loop->body, [&](Node* x) {
      Node* target = nullptr;
      if (x->kind == Nd::op_assign && (x->op == Nd::add || x->op == Nd::sub)) target = x->lhs;
      if (x->kind == Nd::assign && (mentions(x->rhs, root_of(x->lhs)))) target = x->lhs;
      if (!target) return true;
      Obj* v = root_of(target);
      if (!v || !v->is_local || inside.count(v) || v->ty->kind == Ty::ptr || !(is_arith(elem(v->ty)) || elem(v->ty)->kind == Ty::vector)) return true;
      if (v == loop_var(loop)) return true;
      acc.insert(path(target));
      return true;
    });
    accumulators = std::max<int>(accumulators, (int)acc.size());
  }

  static Type* elem(Type* t) {
    while (t->kind == Ty::array) t = t->base;
    return t;
  }

  static Obj* root_of(Node* n) {
    n = strip(n);
    while (n && (n->kind == Nd::deref || n->kind == Nd::member || n->kind == Nd::vec_index || n->kind == Nd::add || n->kind == Nd::cast)) n = n->lhs;
    return n && n->kind == Nd::var ? n->var : nullptr;
  }

  // "c[*][1]": an accumulator's name with constant subscripts kept.
  static std::string path(Node* n) {
    n = strip(n);
    if (!n) return "?";
    if (n->kind == Nd::var) return n->var->name + "#" + std::to_string(n->var->id);
    if (n->kind == Nd::deref && n->lhs->kind == Nd::add) {
      Node* i = strip(n->lhs->rhs);
      return path(n->lhs->lhs) + "[" + (i->kind == Nd::num ? std::to_string(i->ival) : "*") + "]";
    }
    if (n->kind == Nd::member) return path(n->lhs) + "." + n->mem->name;
    if (n->kind == Nd::vec_index) return path(n->lhs) + "[v]";
    return path(n->lhs);
  }

  // Unrolled bodies: a constant step k > 1 whose body addresses v + c for several c.
  void unrolled(Node* loop, const Loop& l) {
    if (l.step <= 1 || !l.var) return;
    std::set<int64_t> offsets;
    walk(loop->body, [&](Node* x) {
      if (x->kind == Nd::add && mentions(x->lhs, l.var)) {
        Node* c = strip(x->rhs);
        if (c->kind == Nd::num && c->ival > 0 && c->ival < l.step) offsets.insert(c->ival);
      }
      return true;
    });
    if (offsets.size() >= 1) unroll = std::max<int>(unroll, (int)offsets.size() + 1);
  }

  void loops(Node* n, std::vector<Loop>& stack) {
    if (!n) return;
    if (n->kind == Nd::for_) {
      Loop l{n, loop_var(n)};
      loop_step(n, l);
      l.depth = (int)stack.size();
      // A tiled loop: a non-unit step whose inner loops start from or are bounded by it.
      if ((l.step > 1 || l.symbolic_step) && l.var) {
        bool tiles = false;
        walk(n->body, [&](Node* x) {
          if (x->kind == Nd::for_ && x != n) {
            Obj* iv = loop_var(x);
            if (iv != l.var && (mentions(x->init, l.var) || mentions(x->cond, l.var))) tiles = true;
          }
          return !tiles;
        });
        if (tiles && !blocked_vars.count(l.var)) {
          blocked_vars.insert(l.var);
          json b = {{"var", l.var->name}};
          if (l.step > 1) b["block"] = l.step;
          blocked.push_back(b);
        }
      }
      unrolled(n, l);
      stack.push_back(l);
      bool inner = false;
      walk(n->body, [&](Node* x) {
        if (x->kind == Nd::for_ || x->kind == Nd::while_ || x->kind == Nd::do_) inner = true;
        return !inner;
      });
      if (!inner) {
        accumulate(n);
        std::string o;
        for (auto& s : stack) o += (o.empty() ? "" : ",") + (s.var ? s.var->name : std::string("?"));
        if (std::find(orders.begin(), orders.end(), o) == orders.end()) orders.push_back(o);
      } else {
        loops(n->body, stack);
      }
      stack.pop_back();
      return;
    }
    children(n, stack);
  }

  void children(Node* n, std::vector<Loop>& stack) {
    for (Node* c : {n->then, n->els, n->body}) loops(c, stack);
    for (Node* c : n->stmts) loops(c, stack);
  }
};

}  // namespace

json program_features(const Program& prog) {
  Scan s;
  for (Obj* fn : prog.globals) {
    if (!fn->is_function || !fn->body || fn->from_prelude) continue;
    walk(fn->body, [&](Node* n) {
      if (n->kind == Nd::call) s.call(n);
      if (n->kind == Nd::omp) s.omp(n);
      if (n->kind == Nd::decl) {
        Type* t = n->var->ty;
        while (t->kind == Ty::array) t = t->base;
        if (t->kind == Ty::vector) s.vector_width(t);
      }
      return true;
    });
    std::vector<Loop> stack;
    s.loops(fn->body, stack);
  }
  bool simd = !s.intrinsics.empty() || s.vector_types;
  bool omp = !s.constructs.empty();
  bool reg = s.accumulators >= 2 || s.unroll >= 2;
  json techniques = json::array();
  if (simd) techniques.push_back("simd");
  if (omp) techniques.push_back("omp");
  if (!s.blocked.empty()) techniques.push_back("cache_blocking");
  if (reg) techniques.push_back("register_blocking");
  if (s.prefetches) techniques.push_back("prefetch");
  return json{
      {"techniques", techniques},
      {"simd", {{"used", simd}, {"families", s.families}, {"width", s.width}, {"intrinsics", s.intrinsics}}},
      {"openmp", {{"used", omp}, {"constructs", s.constructs}, {"schedules", s.schedules}, {"collapse", s.collapse},
                  {"reductions", s.reductions}, {"num_threads", s.num_threads}}},
      {"prefetch", {{"used", s.prefetches > 0}, {"count", s.prefetches}}},
      {"cache_blocking", {{"used", !s.blocked.empty()}, {"loops", s.blocked}}},
      {"register_blocking", {{"used", reg}, {"accumulators", s.accumulators}, {"unroll", s.unroll}}},
      {"loop_orders", s.orders},
  };
}

// A read of the source alone, with every vector extension enabled so that no intrinsic is
// refused: the techniques it uses whatever machine compiles it.
json features(const std::string& source) {
  Program prog;
  Options o;
  o.march = {"-mavx512f", "-mavx2", "-mfma"};
  try {
    parse_source(source, o, prog);
  } catch (const Error& e) {
    return json{{"error", format_diagnostic(e)}};
  }
  return program_features(prog);
}

}  // namespace kernelc
