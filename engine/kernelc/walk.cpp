// A visitor over the syntax tree, for the passes that only read it (the allow-list,
// OpenMP capture analysis, features).
#include "kernelc/walk.hpp"

namespace kernelc {

static void walk_init(Initializer* in, const std::function<bool(Node*)>& f) {
  if (!in) return;
  if (in->expr) walk(in->expr, f);
  for (Initializer* c : in->children) walk_init(c, f);
}

void walk(Node* n, const std::function<bool(Node*)>& f) {
  if (!n) return;
  if (!f(n)) return;
  for (Node* c : {n->lhs, n->rhs, n->cond, n->then, n->els, n->init, n->inc, n->body, n->bound}) walk(c, f);
  for (Node* c : n->stmts) walk(c, f);
  for (Node* c : n->args) walk(c, f);
  walk_init(n->init_list, f);
  if (n->omp) {
    walk(n->omp->num_threads, f);
    walk(n->omp->chunk, f);
    walk(n->omp->if_clause, f);
  }
}

Obj* root_var(Node* n) {
  while (n && (n->kind == Nd::member || n->kind == Nd::vec_index)) n = n->lhs;
  return n && n->kind == Nd::var ? n->var : nullptr;
}

}  // namespace kernelc
