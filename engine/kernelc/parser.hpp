// The parser's shared state. Its work is split by concern: parse.cpp (declarations and
// the program), parse_stmt.cpp (statements and OpenMP directives), parse_expr.cpp
// (expressions), check.cpp (typing: the usual conversions, lvalues, calls).
#pragma once

#include <unordered_map>

#include "kernelc/ast.hpp"

namespace kernelc {

struct VarScope {
  Obj* var = nullptr;
  Type* type_def = nullptr;
  bool is_enum = false;
  int64_t enum_val = 0;
};

struct Scope {
  std::unordered_map<std::string, VarScope> vars;
  std::unordered_map<std::string, Type*> tags;
};

struct DeclAttr {
  Storage storage = Storage::auto_;
  bool is_inline = false;
  bool always_inline = false;
  int64_t align = 0;
};

// What __attribute__((...)) said.
struct Attrs {
  int64_t aligned = 0;
  int64_t vector_size = 0;
  bool always_inline = false;
};

class Parser {
 public:
  Parser(std::vector<Token> toks, Program& prog);
  void program();

  // ---- tokens
  std::vector<Token> toks;
  size_t pos = 0;
  Program& prog;
  const Token& tok() const { return toks[pos]; }
  const Token& peek(size_t n) const { return toks[std::min(pos + n, toks.size() - 1)]; }
  bool equal(const char* s) const { return tok().kind != Tk::str && tok().kind != Tk::num && tok().text == s && tok().kind != Tk::eof; }
  bool consume(const char* s) {
    if (!equal(s)) return false;
    pos++;
    return true;
  }
  void skip(const char* s);
  Loc loc() const { return tok().loc; }
  [[noreturn]] void expected(const char* what);
  int depth = 0;  // nesting, bounded so hostile input cannot exhaust the stack
  struct Nest {
    Parser& p;
    explicit Nest(Parser& p);
    ~Nest() { p.depth--; }
  };

  // ---- types (check.cpp)
  Type *ty_void, *ty_bool, *ty_char, *ty_schar, *ty_uchar, *ty_short, *ty_ushort, *ty_int, *ty_uint,
      *ty_long, *ty_ulong, *ty_llong, *ty_ullong, *ty_float, *ty_double, *ty_ldouble;
  Type* new_type(Ty k, int64_t size, int64_t align);
  Type* pointer_to(Type* base);
  Type* array_of(Type* base, int64_t len);
  Type* vector_of(Type* base, int64_t lanes, Loc where);
  Type* func_type(Type* ret);
  Type* qualified(Type* t, bool is_const);
  Type* aligned_to(Type* t, int64_t align);
  Type* unqual(Type* t) { return t->origin ? t->origin : t; }

  // ---- scopes (parse.cpp)
  std::vector<Scope> scopes;
  void enter() { scopes.emplace_back(); }
  void leave() { scopes.pop_back(); }
  VarScope* find(const std::string& name);
  Type* find_tag(const std::string& name);
  VarScope& declare(const std::string& name) { return scopes.back().vars[name]; }
  Obj* new_obj(const std::string& name, Type* ty, Loc l);
  Obj* current_fn = nullptr;
  bool in_prelude = false;
  int next_id = 0;

  // ---- declarations (parse.cpp)
  bool is_typename() const;
  Type* declspec(DeclAttr* attr);
  Type* declarator(Type* ty, std::string* name, Loc* name_loc, std::vector<Obj*>* params = nullptr);
  Type* abstract_declarator(Type* ty);
  Type* type_suffix(Type* ty, std::vector<Obj*>* params);
  Type* array_dims(Type* ty);
  Type* func_params(Type* ty, std::vector<Obj*>* params);
  Type* typename_();
  Type* struct_decl(bool is_union);
  Type* enum_specifier();
  Attrs attributes();
  void function(Type* ty, const std::string& name, Loc l, DeclAttr& attr, std::vector<Obj*>& params);
  void function_body(Obj* fn);
  void parse_lazy_body(Obj* fn);
  std::vector<Token>* outer_toks = nullptr;  // the main stream while a clause is sub-parsed
  void global_variables(Type* base, DeclAttr& attr);
  Initializer* initializer(Type* ty, Type** new_ty);
  Initializer* initializer_list(Type* ty, Type** new_ty);
  void typedef_names(Type* base);
  int64_t const_expr();

  // ---- statements (parse_stmt.cpp)
  Node* compound_stmt();
  Node* stmt();
  Node* declaration(Type* base, DeclAttr& attr);
  Node* pragma_stmt();
  OmpClauses* omp_clauses(std::vector<Token> words, Loc at);
  std::vector<Node*>* cur_switch_cases = nullptr;
  Node* cur_switch = nullptr;
  int loop_depth = 0, switch_depth = 0;
  std::vector<std::pair<std::string, Loc>> gotos;
  std::set<std::string> labels;

  // ---- expressions (parse_expr.cpp)
  Node* expr();
  Node* assign();
  Node* conditional();
  Node* binary(int prec);
  Node* cast();
  Node* unary();
  Node* postfix();
  Node* primary();
  Node* call(Token name);
  Node* builtin_call(Token name);
  Node* number(const Token& t);
  Node* compound_literal(Type* ty, Loc l);
  std::vector<Node*> func_args(Loc l);

  // ---- typing (check.cpp)
  Node* new_node(Nd k, Loc l);
  Node* new_num(int64_t v, Type* ty, Loc l);
  Node* new_var(Obj* v, Loc l);
  Node* new_cast(Node* e, Type* ty);
  Node* convert(Node* e, Type* to, const char* context);  // implicit, as by assignment
  Node* rvalue(Node* e);          // array and function designators decay
  Node* to_condition(Node* e, const char* context);
  Type* common_type(Type* a, Type* b);
  Type* promote(Type* t);
  Node* new_binary(Nd k, Node* a, Node* b, Loc l);
  Node* new_add(Node* a, Node* b, Loc l);
  Node* new_sub(Node* a, Node* b, Loc l);
  Node* new_compare(Nd k, Node* a, Node* b, Loc l);
  Node* new_logical(Nd k, Node* a, Node* b, Loc l);
  Node* new_assign(Node* a, Node* b, Loc l);
  Node* new_op_assign(Nd op, Node* a, Node* b, Loc l);
  Node* new_incdec(Nd k, Node* a, Loc l);
  Node* new_unary(Nd k, Node* a, Loc l);
  Node* new_deref(Node* a, Loc l);
  Node* new_addr(Node* a, Loc l);
  Node* new_member(Node* a, const Token& name, bool arrow, Loc l);
  Node* new_index(Node* a, Node* i, Loc l);
  Node* new_cond(Node* c, Node* a, Node* b, Loc l);
  Node* new_call(Obj* fn, std::vector<Node*> args, Loc l);
  void require_lvalue(Node* e, const char* what);
  bool is_null_constant(Node* e);
  static int64_t eval(Node* e);        // integer constant expressions
  static bool is_constant(Node* e);
  static double eval_double(Node* e);
};

}  // namespace kernelc
