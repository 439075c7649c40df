// Pass 3b: statements, local declarations and OpenMP directives. A directive becomes an
// `omp` node holding its clauses and the statement it applies to; other pragmas
// (GCC unroll, ivdep) are hints this front end leaves to the optimizer.
#include "kernelc/parser.hpp"

namespace kernelc {

// compound-stmt = "{" (declaration | stmt)* "}"
Node* Parser::compound_stmt() {
  Nest n(*this);
  Node* blk = new_node(Nd::block, loc());
  skip("{");
  enter();
  while (!consume("}")) {
    if (tok().kind == Tk::eof) error_at(blk->loc, "expected '}' at end of input");
    if (is_typename() && !peek(1).is(":")) {
      DeclAttr attr;
      Type* base = declspec(&attr);
      blk->stmts.push_back(declaration(base, attr));
    } else {
      blk->stmts.push_back(stmt());
    }
  }
  leave();
  return blk;
}

// declaration = declspec (declarator ("=" initializer)? ("," declarator ("=" initializer)?)*)? ";"
//   (declspec already read)
Node* Parser::declaration(Type* base, DeclAttr& attr) {
  Node* blk = new_node(Nd::block, loc());
  bool first = true;
  while (!consume(";")) {
    if (!first && !consume(",")) expected("',' or ';'");
    first = false;
    std::string name;
    Loc nl = loc();
    Type* ty = declarator(base, &name, &nl);
    Attrs a = attributes();
    if (name.empty()) error_at(nl, "expected identifier or '('");
    if (attr.storage == Storage::typedef_) {
      if (a.vector_size) ty = vector_of(ty, a.vector_size, nl);
      if (a.aligned) ty = aligned_to(ty, a.aligned);
      if (scopes.back().vars.count(name)) error_at(nl, "redefinition of '" + name + "'");
      declare(name).type_def = ty;
      continue;
    }
    if (ty->kind == Ty::func) {
      // a local prototype
      Obj* fn = new_obj(name, ty, nl);
      fn->is_function = true;
      VarScope* g = find(name);
      if (g && g->var && g->var->is_function) fn = g->var;
      declare(name).var = fn;
      if (!g) prog.globals.push_back(fn);
      continue;
    }
    if (ty->kind == Ty::void_) error_at(nl, "variable or field '" + name + "' declared void");
    if ((ty->kind == Ty::struct_ || ty->kind == Ty::union_) && !ty->complete && !ty->origin)
      error_at(nl, "storage size of '" + name + "' isn't known");
    if (scopes.back().vars.count(name)) error_at(nl, "redefinition of '" + name + "'");
    if (attr.storage == Storage::extern_) unsupported_at(nl, "extern declarations inside functions");
    Obj* v = new_obj(name, ty, nl);
    v->align = std::max(attr.align, a.aligned);
    if (attr.storage == Storage::static_) {
      v->is_static = true;
      v->is_definition = true;
      if (ty->kind == Ty::array && ty->len == -2) error_at(nl, "storage size of '" + name + "' isn't constant");
      declare(name).var = v;
      if (consume("=")) {
        Type* nt;
        v->init = initializer(ty, &nt);
        v->ty = nt;
      }
      prog.globals.push_back(v);
      continue;
    }
    v->is_local = true;
    Node* d = new_node(Nd::decl, nl);
    d->var = v;
    if (ty->kind == Ty::array && ty->len == -2) {
      if (ty->base->kind == Ty::array && ty->base->len == -2) unsupported_at(nl, "multi-dimensional variable-length arrays");
      // alloca'd storage is released only when the function returns
      if (loop_depth > 0) unsupported_at(nl, "variable-length arrays declared inside loops");
      v->is_vla = true;
      d->bound = ty->vla;
      if (equal("=")) error_at(loc(), "variable-sized object may not be initialized");
    }
    declare(name).var = v;  // visible in its own initializer, as in C
    if (consume("=")) {
      Type* nt;
      d->init_list = initializer(ty, &nt);
      v->ty = nt;
    }
    if (v->ty->kind == Ty::array && v->ty->len == -1) error_at(nl, "array size missing in '" + name + "'");
    blk->stmts.push_back(d);
  }
  return blk;
}

// stmt = pragma-stmt
//      | compound-stmt | ";"
//      | "if" "(" expr ")" stmt ("else" stmt)?
//      | "while" "(" expr ")" stmt
//      | "do" stmt "while" "(" expr ")" ";"
//      | "for" "(" (declaration | expr? ";") expr? ";" expr? ")" stmt
//      | "switch" "(" expr ")" stmt | "case" const-expr ":" stmt | "default" ":" stmt
//      | "break" ";" | "continue" ";" | "goto" ident ";" | "return" expr? ";"
//      | ident ":" stmt
//      | expr ";"
Node* Parser::stmt() {
  Nest nest(*this);
  Loc l = loc();
  if (tok().kind == Tk::pragma) return pragma_stmt();
  if (equal("{")) return compound_stmt();
  if (consume(";")) return new_node(Nd::null_stmt, l);
  if (consume("if")) {
    Node* n = new_node(Nd::if_, l);
    skip("(");
    n->cond = to_condition(expr(), "'if' condition");
    skip(")");
    n->then = stmt();
    if (consume("else")) n->els = stmt();
    return n;
  }
  if (consume("while")) {
    Node* n = new_node(Nd::while_, l);
    skip("(");
    n->cond = to_condition(expr(), "'while' condition");
    skip(")");
    loop_depth++;
    n->body = stmt();
    loop_depth--;
    return n;
  }
  if (consume("do")) {
    Node* n = new_node(Nd::do_, l);
    loop_depth++;
    n->body = stmt();
    loop_depth--;
    if (!consume("while")) expected("'while'");
    skip("(");
    n->cond = to_condition(expr(), "'do' condition");
    skip(")");
    skip(";");
    return n;
  }
  if (consume("for")) {
    Node* n = new_node(Nd::for_, l);
    skip("(");
    enter();
    if (is_typename()) {
      DeclAttr attr;
      Type* base = declspec(&attr);
      if (attr.storage == Storage::static_ || attr.storage == Storage::typedef_)
        error_at(l, "declaration of non-variable in 'for' loop initial declaration");
      n->init = declaration(base, attr);
    } else if (!consume(";")) {
      Node* e = new_node(Nd::expr_stmt, loc());
      e->lhs = expr();
      n->init = e;
      skip(";");
    }
    if (!equal(";")) n->cond = to_condition(expr(), "'for' condition");
    skip(";");
    if (!equal(")")) {
      n->inc = new_node(Nd::expr_stmt, loc());
      n->inc->lhs = expr();
    }
    skip(")");
    loop_depth++;
    n->body = stmt();
    loop_depth--;
    leave();
    return n;
  }
  if (consume("switch")) {
    Node* n = new_node(Nd::switch_, l);
    skip("(");
    Node* c = rvalue(expr());
    if (!is_integer(c->ty)) error_at(c->loc, "switch quantity not an integer");
    n->cond = new_cast(c, promote(c->ty));
    skip(")");
    Node* saved = cur_switch;
    cur_switch = n;
    switch_depth++;
    n->body = stmt();
    switch_depth--;
    cur_switch = saved;
    return n;
  }
  if (consume("case")) {
    if (!cur_switch) error_at(l, "case label not within a switch statement");
    Node* n = new_node(Nd::case_, l);
    n->case_val = const_expr();
    if (equal("...")) unsupported_at(loc(), "case ranges");
    skip(":");
    for (Node* c : cur_switch->cases)
      if (c->case_val == n->case_val) error_at(l, "duplicate case value");
    cur_switch->cases.push_back(n);
    n->body = equal("}") ? new_node(Nd::null_stmt, l) : stmt();
    return n;
  }
  if (consume("default")) {
    if (!cur_switch) error_at(l, "'default' label not within a switch statement");
    if (cur_switch->default_case) error_at(l, "multiple default labels in one switch");
    Node* n = new_node(Nd::case_, l);
    skip(":");
    cur_switch->default_case = n;
    n->body = equal("}") ? new_node(Nd::null_stmt, l) : stmt();
    return n;
  }
  if (consume("break")) {
    if (!loop_depth && !switch_depth) error_at(l, "break statement not within loop or switch");
    skip(";");
    return new_node(Nd::break_, l);
  }
  if (consume("continue")) {
    if (loop_depth == 0) error_at(l, "continue statement not within a loop");
    skip(";");
    return new_node(Nd::continue_, l);
  }
  if (consume("goto")) {
    Node* n = new_node(Nd::goto_, l);
    if (tok().kind != Tk::ident) expected("identifier");
    n->str = tok().text;
    gotos.push_back({n->str, loc()});
    pos++;
    skip(";");
    return n;
  }
  if (consume("return")) {
    Node* n = new_node(Nd::return_, l);
    Type* rt = current_fn->ty->ret;
    if (!consume(";")) {
      Node* e = expr();
      skip(";");
      if (rt->kind == Ty::void_) {
        if (rvalue(e)->ty->kind != Ty::void_) error_at(e->loc, "'return' with a value, in function returning void");
        n->lhs = e;
      } else {
        n->lhs = convert(e, rt, "returning");
      }
    } else if (rt->kind != Ty::void_) {
      error_at(l, "'return' with no value, in function returning non-void");
    }
    return n;
  }
  if (tok().kind == Tk::ident && peek(1).is(":")) {
    Node* n = new_node(Nd::label, l);
    n->str = tok().text;
    if (!labels.insert(n->str).second) error_at(l, "duplicate label '" + n->str + "'");
    pos += 2;
    n->body = equal("}") ? new_node(Nd::null_stmt, l) : stmt();
    return n;
  }
  if (is_typename()) error_at(l, "a label can only be part of a statement and a declaration is not a statement");
  Node* n = new_node(Nd::expr_stmt, l);
  n->lhs = expr();
  skip(";");
  return n;
}

// ---- OpenMP ---------------------------------------------------------------------------

// A sub-parse of a clause's argument tokens, in the current scope.
struct SubParse {
  Parser& p;
  std::vector<Token> saved;
  size_t saved_pos;
  std::vector<Token>* saved_outer;
  SubParse(Parser& p, std::vector<Token> toks, Loc end) : p(p), saved(std::move(p.toks)), saved_pos(p.pos), saved_outer(p.outer_toks) {
    Token e;
    e.kind = Tk::eof;
    e.loc = end;
    toks.push_back(e);
    p.toks = std::move(toks);
    p.pos = 0;
    p.outer_toks = &saved;
  }
  ~SubParse() {
    p.toks = std::move(saved);
    p.pos = saved_pos;
    p.outer_toks = saved_outer;
  }
  void done() {
    if (p.tok().kind != Tk::eof) p.expected("')'");
  }
};

static std::vector<std::vector<Token>> split_commas(const std::vector<Token>& v) {
  std::vector<std::vector<Token>> out(1);
  int d = 0;
  for (auto& t : v) {
    if (t.is("(")) d++;
    if (t.is(")")) d--;
    if (d == 0 && t.is(",")) {
      out.emplace_back();
      continue;
    }
    out.back().push_back(t);
  }
  return out;
}

// omp-directive = ("parallel" "for"? | "for" | "simd" | "parallel" "for" "simd" | "barrier" | ...)
//                 clause*,
// clause = ident ("(" (reduction-op ":")? argument ("," argument)* ")")?
OmpClauses* Parser::omp_clauses(std::vector<Token> w, Loc at) {
  OmpClauses* c = &prog.omps.emplace_back();
  size_t i = 0;
  auto word = [&](const char* s) { return i < w.size() && w[i].is(s); };
  // directive name
  std::string d;
  if (word("parallel")) {
    i++;
    d = "parallel";
    c->kind = OmpKind::parallel;
    if (word("for")) {
      i++;
      d += " for";
      c->kind = OmpKind::parallel_for;
      if (word("simd")) { i++; d += " simd"; c->simd = true; }
    } else if (word("sections")) {
      unsupported_at(at, "'#pragma omp parallel sections'");
    } else if (word("loop")) {
      i++;
      d += " loop";
      c->kind = OmpKind::parallel_for;
    }
  } else if (word("for")) {
    i++;
    d = "for";
    c->kind = OmpKind::for_;
    if (word("simd")) { i++; d += " simd"; c->simd = true; }
  } else if (word("simd")) {
    i++; d = "simd"; c->kind = OmpKind::simd;
  } else if (word("barrier")) {
    i++; d = "barrier"; c->kind = OmpKind::barrier;
  } else if (word("critical")) {
    i++; d = "critical"; c->kind = OmpKind::critical;
    if (i + 2 < w.size() + 0 && w[i].is("(")) {
      c->critical_name = w[i + 1].text;
      i += 3;
    }
  } else if (word("atomic")) {
    i++; d = "atomic"; c->kind = OmpKind::atomic;
    if (word("read") || word("write") || word("update") || word("capture")) {
      c->atomic_kind = w[i].text;
      i++;
    }
    if (word("seq_cst") || word("relaxed")) i++;
  } else if (word("single")) {
    i++; d = "single"; c->kind = OmpKind::single;
  } else if (word("master") || word("masked")) {
    i++; d = "master"; c->kind = OmpKind::master;
  } else if (word("taskwait")) {
    i++; d = "taskwait"; c->kind = OmpKind::taskwait;
  } else if (word("flush")) {
    i = w.size(); d = "flush"; c->kind = OmpKind::flush;
  } else {
    std::string name = i < w.size() ? w[i].text : "";
    if (name == "sections" || name == "section" || name == "task" || name == "taskloop" || name == "ordered" ||
        name == "teams" || name == "target" || name == "distribute" || name == "loop" || name == "threadprivate" ||
        name == "declare" || name == "scan" || name == "cancel" || name == "taskgroup")
      unsupported_at(at, "'#pragma omp " + name + "'");
    error_at(at, "expected an OpenMP directive before '" + name + "'");
  }
  c->directive = d;
  // clauses
  while (i < w.size()) {
    if (w[i].is(",")) { i++; continue; }
    const Token& name = w[i];
    std::string n = name.text;
    i++;
    std::vector<Token> args;
    bool has_args = false;
    if (i < w.size() && w[i].is("(")) {
      has_args = true;
      int dd = 0;
      i++;
      while (i < w.size()) {
        if (w[i].is("(")) dd++;
        if (w[i].is(")")) {
          if (dd == 0) break;
          dd--;
        }
        args.push_back(w[i++]);
      }
      if (i >= w.size()) error_at(name.loc, "expected ')' after '" + n + "' clause");
      i++;
    }
    auto need_args = [&] {
      if (!has_args || args.empty()) error_at(name.loc, "expected '(' after '" + n + "'");
    };
    auto var_list = [&](std::vector<Obj*>& into, const std::vector<Token>& list) {
      for (auto& item : split_commas(list)) {
        if (item.size() != 1 || item[0].kind != Tk::ident) {
          if (!item.empty() && item.size() > 1 && item[1].is("["))
            unsupported_at(item[0].loc, "array sections in OpenMP clauses");
          error_at(item.empty() ? name.loc : item[0].loc, "expected identifier in '" + n + "' clause");
        }
        VarScope* s = find(item[0].text);
        if (!s || !s->var) error_at(item[0].loc, "'" + item[0].text + "' undeclared (first use in this function)");
        if (s->var->is_function) error_at(item[0].loc, "'" + item[0].text + "' is not a variable in clause '" + n + "'");
        into.push_back(s->var);
      }
    };
    auto expr_arg = [&](const std::vector<Token>& toks) {
      SubParse sp(*this, toks, name.loc);
      Node* e = rvalue(assign());
      sp.done();
      return e;
    };
    if (n == "private") { need_args(); var_list(c->priv, args); }
    else if (n == "firstprivate") { need_args(); var_list(c->firstpriv, args); }
    else if (n == "lastprivate") { need_args(); var_list(c->lastpriv, args); }
    else if (n == "shared") { need_args(); var_list(c->shared, args); }
    else if (n == "default" || n == "proc_bind" || n == "untied" || n == "mergeable" || n == "safelen" ||
             n == "simdlen" || n == "aligned" || n == "linear" || n == "nontemporal" || n == "order" ||
             n == "copyin" || n == "hint" || n == "seq_cst" || n == "relaxed" || n == "acquire" ||
             n == "release" || n == "acq_rel") {
      // scheduling hints and defaults that don't change a correct program's result
    }
    else if (n == "nowait") c->nowait = true;
    else if (n == "num_threads") { need_args(); c->num_threads = expr_arg(args); if (!is_integer(c->num_threads->ty)) error_at(name.loc, "'num_threads' expression must be integral"); }
    else if (n == "if") { need_args(); c->if_clause = to_condition(expr_arg(args), nullptr); }
    else if (n == "collapse") {
      need_args();
      Node* e = expr_arg(args);
      if (!is_integer(e->ty) || !is_constant(e)) error_at(name.loc, "collapse argument needs positive constant integer expression");
      int64_t v = eval(e);
      if (v <= 0 || v > 8) error_at(name.loc, "collapse argument needs positive constant integer expression");
      c->collapse = (int)v;
    } else if (n == "schedule") {
      need_args();
      auto parts = split_commas(args);
      size_t k = 0;
      while (k < parts[0].size() && (parts[0][k].is("monotonic") || parts[0][k].is("nonmonotonic") || parts[0][k].is(":"))) k++;
      if (k >= parts[0].size()) error_at(name.loc, "invalid schedule kind");
      std::string kind = parts[0][k].text;
      if (kind != "static" && kind != "dynamic" && kind != "guided" && kind != "auto" && kind != "runtime")
        error_at(parts[0][k].loc, "invalid schedule kind");
      c->schedule = kind;
      c->schedule_given = true;
      if (parts.size() > 1) {
        c->chunk = expr_arg(parts[1]);
        if (!is_integer(c->chunk->ty)) error_at(name.loc, "chunk size expression must be integral");
      }
    } else if (n == "reduction") {
      need_args();
      size_t colon = 0;
      while (colon < args.size() && !args[colon].is(":")) colon++;
      if (colon == 0 || colon >= args.size()) error_at(name.loc, "expected ':' in 'reduction' clause");
      std::string op;
      for (size_t k = 0; k < colon; k++) op += args[k].text;
      static const std::set<std::string> ops = {"+", "*", "-", "&", "|", "^", "&&", "||", "max", "min"};
      if (!ops.count(op)) error_at(args[0].loc, "invalid reduction-identifier '" + op + "'");
      std::vector<Obj*> vars;
      var_list(vars, std::vector<Token>(args.begin() + colon + 1, args.end()));
      for (Obj* v : vars) {
        if (!is_arith(v->ty)) {
          if (v->ty->kind == Ty::array) unsupported_at(name.loc, "array reductions");
          error_at(name.loc, "user defined reduction not found for '" + v->name + "'");
        }
        c->reductions.push_back({op, v, name.loc});
      }
    } else {
      error_at(name.loc, "'" + n + "' is not valid for '#pragma omp " + d + "'");
    }
  }
  return c;
}

// pragma-stmt = "#pragma" "omp" omp-directive stmt?   (barrier, taskwait, flush take none)
//             | "#pragma" other-words stmt            (a hint: the statement alone)
Node* Parser::pragma_stmt() {
  Token p = tok();
  pos++;
  if (p.pragma.empty() || !p.pragma[0].is("omp")) {
    // GCC unroll, GCC ivdep, unroll, ...: hints for the next statement
    if (equal("}")) return new_node(Nd::null_stmt, p.loc);
    return stmt();
  }
  std::vector<Token> words(p.pragma.begin() + 1, p.pragma.end());
  OmpClauses* c = omp_clauses(words, p.loc);
  Node* n = new_node(Nd::omp, p.loc);
  n->omp = c;
  switch (c->kind) {
    case OmpKind::barrier: case OmpKind::taskwait: case OmpKind::flush:
      return n;
    default: break;
  }
  if (equal("}")) error_at(loc(), "expected statement before '}' token");
  bool loop = c->kind == OmpKind::for_ || c->kind == OmpKind::parallel_for || c->kind == OmpKind::simd;
  if (loop && !equal("for") && tok().kind != Tk::pragma) error_at(loc(), "for statement expected before '" + tok().text + "'");
  n->body = stmt();
  if (loop) {
    Node* b = n->body;
    if (b->kind != Nd::for_) error_at(b->loc, "for statement expected");
  }
  if (c->kind == OmpKind::atomic) {
    Node* b = n->body;
    if (b->kind != Nd::expr_stmt) error_at(b->loc, "invalid form of '#pragma omp atomic'");
    Nd k = b->lhs->kind;
    if (k != Nd::assign && k != Nd::op_assign && k != Nd::pre_inc && k != Nd::post_inc && k != Nd::pre_dec && k != Nd::post_dec)
      error_at(b->loc, "invalid form of '#pragma omp atomic' before ';'");
  }
  return n;
}

}  // namespace kernelc
