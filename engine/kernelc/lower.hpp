// Pass 4: the syntax tree to libgccjit IR. lower.cpp (4a) does functions and statements,
// lower_expr.cpp (4b) expressions, lower_omp.cpp (4c) outlines OpenMP regions onto libgomp.
#pragma once

#include <libgccjit.h>

#include <map>
#include <unordered_map>

#include "kernelc/ast.hpp"

namespace kernelc {

// One function being built: the source function or an outlined OpenMP region.
struct FnCtx {
  gcc_jit_function* fn = nullptr;
  gcc_jit_block* cur = nullptr;
  Obj* src = nullptr;                 // the C function it came from
  bool outlined = false;
  std::unordered_map<const Obj*, gcc_jit_lvalue*> vars;
  std::vector<gcc_jit_block*> breaks, continues;
  std::map<std::string, gcc_jit_block*> labels;
  std::set<std::string> placed;
  int blocks = 0, temps = 0;
  std::vector<gcc_jit_block*> all;
  std::set<gcc_jit_block*> ended;
};

class Lowerer {
 public:
  Lowerer(gcc_jit_context* ctx, Program& prog) : ctx(ctx), prog(prog) {}
  void program(const std::string& entry);
  std::set<std::string> externals;  // symbols the code references

  gcc_jit_context* ctx;
  Program& prog;
  FnCtx* f = nullptr;
  std::unordered_map<const Obj*, gcc_jit_function*> funcs;
  std::unordered_map<const Obj*, gcc_jit_lvalue*> globals;
  std::unordered_map<const Node*, gcc_jit_lvalue*> subst;  // op= reads its lvalue once
  std::map<std::string, gcc_jit_function*> imported;
  std::map<std::string, gcc_jit_lvalue*> critical_names;
  int omp_fns = 0;

  // types and helpers
  gcc_jit_type* type(Type* t);
  gcc_jit_type* prim(enum gcc_jit_types k) { return gcc_jit_context_get_type(ctx, k); }
  gcc_jit_location* jloc(Loc l);
  gcc_jit_block* new_block(const char* what);
  gcc_jit_lvalue* temp(gcc_jit_type* t, const char* what);
  gcc_jit_rvalue* long_val(int64_t v);
  gcc_jit_rvalue* cast(gcc_jit_rvalue* v, Type* from, Type* to, Loc l);
  gcc_jit_rvalue* truth(gcc_jit_rvalue* v, Type* t, Loc l);  // v != 0, as bool
  gcc_jit_rvalue* call_import(const char* name, gcc_jit_type* ret, std::vector<gcc_jit_type*> params,
                              std::vector<gcc_jit_rvalue*> args, Loc l);
  void eval(gcc_jit_rvalue* v, Loc l) { gcc_jit_block_add_eval(f->cur, jloc(l), v); }
  void assign(gcc_jit_lvalue* d, gcc_jit_rvalue* v, Loc l) { gcc_jit_block_add_assignment(f->cur, jloc(l), d, v); }
  void jump(gcc_jit_block* to, Loc l);
  // Block terminators; every block of a function must end, the unreachable ones too.
  void ended(gcc_jit_block* b) { f->ended.insert(b); }
  void end_jump(gcc_jit_block* b, gcc_jit_location* l, gcc_jit_block* to) { gcc_jit_block_end_with_jump(b, l, to); ended(b); }
  void end_cond(gcc_jit_block* b, gcc_jit_location* l, gcc_jit_rvalue* c, gcc_jit_block* t, gcc_jit_block* e) { gcc_jit_block_end_with_conditional(b, l, c, t, e); ended(b); }
  void end_void(gcc_jit_block* b, gcc_jit_location* l) { gcc_jit_block_end_with_void_return(b, l); ended(b); }
  void end_return(gcc_jit_block* b, gcc_jit_location* l, gcc_jit_rvalue* v) { gcc_jit_block_end_with_return(b, l, v); ended(b); }
  void end_switch(gcc_jit_block* b, gcc_jit_location* l, gcc_jit_rvalue* v, gcc_jit_block* d, int n, gcc_jit_case** cs) { gcc_jit_block_end_with_switch(b, l, v, d, n, cs); ended(b); }
  void finish_blocks();  // ends what control never reaches
  void set_block(gcc_jit_block* b) { f->cur = b; }
  bool terminated = false;

  // functions
  gcc_jit_function* declare(Obj* fn);
  void define(Obj* fn);
  void declare_global(Obj* v);
  gcc_jit_rvalue* const_init(Initializer* in, Type* ty);

  // statements
  void stmt(Node* n);
  void local_decl(Node* n);
  void init_local(gcc_jit_lvalue* dst, Initializer* in, Type* ty, Loc l);
  void if_stmt(Node* n);
  void loop(Node* n);
  void switch_stmt(Node* n);
  gcc_jit_block* label_block(const std::string& name);
  void cond_jump(Node* c, gcc_jit_block* yes, gcc_jit_block* no);

  // expressions
  gcc_jit_rvalue* rv(Node* n);
  gcc_jit_lvalue* lv(Node* n);
  void effect(Node* n);
  gcc_jit_rvalue* assign_expr(Node* n, bool want);
  gcc_jit_rvalue* logical(Node* n);
  gcc_jit_rvalue* conditional(Node* n);
  gcc_jit_rvalue* call(Node* n);
  gcc_jit_rvalue* decay(Node* array);
  gcc_jit_lvalue* element(gcc_jit_rvalue* ptr, gcc_jit_rvalue* index, Loc l);
  gcc_jit_lvalue* vector_element(Node* n);
  gcc_jit_rvalue* binary(Node* n);
  gcc_jit_function* library_function(Obj* fn);

  // OpenMP (lower_omp.cpp)
  void omp(Node* n);
  void omp_parallel(Node* n);
  void omp_for(Node* n, OmpClauses* c, Node* loop_nest);
  void omp_sync(Node* n);
  gcc_jit_rvalue* thread_num(Loc l);
  gcc_jit_rvalue* num_threads(Loc l);
};

}  // namespace kernelc
