// The front end's data: tokens, types, the syntax tree, and the passes that make them.
// Internal to engine/kernelc; the contract for everyone else is kernelc.hpp.
//
// The passes run in order, one file each: tokenize -> preprocess -> parse (which also
// type-checks, inserting the usual conversions) -> check_calls (the allow-list) ->
// lower (+ lower_omp) to libgccjit. program_features reads the tree the parser made, so a
// compile reports the techniques of exactly what it compiled.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernelc/kernelc.hpp"

struct gcc_jit_type;
struct gcc_jit_function;
struct gcc_jit_lvalue;
struct gcc_jit_field;
struct gcc_jit_struct;

namespace kernelc {

// ---- diagnostics ------------------------------------------------------------------

struct Loc {
  const char* file = "kernel.c";
  int line = 0, col = 0;
};

// The first error ends the compile; its kind says whether it is the program's fault.
struct Error : std::runtime_error {
  Status kind;
  Loc loc;
  Error(Status k, Loc l, const std::string& msg) : std::runtime_error(msg), kind(k), loc(l) {}
};

[[noreturn]] void error_at(Loc loc, const std::string& msg);        // invalid C
[[noreturn]] void unsupported_at(Loc loc, const std::string& msg);  // valid C we cannot do yet
std::string format_diagnostic(const Error& e);

// ---- tokens -----------------------------------------------------------------------

enum class Tk { ident, punct, keyword, num, str, chr, pragma, eof };

struct Token {
  Tk kind = Tk::eof;
  std::string text;
  Loc loc;
  bool bol = false;    // first on its line
  bool space = false;  // preceded by white space
  std::shared_ptr<const std::set<std::string>> hideset;  // macros not to expand again
  std::vector<Token> pragma;  // kind == pragma: the tokens after "#pragma"
  bool is(const char* s) const { return (kind == Tk::punct || kind == Tk::keyword || kind == Tk::ident) && text == s; }
};

// One source file made tokens; `file` names it in diagnostics.
std::vector<Token> tokenize(const std::string& src, const char* file);

struct PreprocessOptions {
  std::vector<std::pair<std::string, std::string>> defines;  // predefined macros
};
std::vector<Token> preprocess(std::vector<Token> toks, const PreprocessOptions& opts);

// The headers kernels include, as the front end's own text (never the system's).
const char* builtin_header(const std::string& name);  // nullptr: unknown header
const char* prelude_source();                          // declarations every kernel sees
const std::vector<Token>& prelude_tokens();            // the prelude, preprocessed once

// ---- types ------------------------------------------------------------------------

enum class Ty {
  void_, bool_, char_, schar, uchar, short_, ushort, int_, uint, long_, ulong, llong, ullong,
  float_, double_, ldouble, ptr, array, func, struct_, union_, vector, enum_
};

struct Obj;
struct Member;

struct Type {
  Ty kind = Ty::int_;
  int64_t size = 4, align = 4;
  bool is_const = false;
  Type* base = nullptr;   // pointee, element, vector lane
  int64_t len = 0;        // array length (-1 incomplete), vector lanes
  Type* origin = nullptr; // the unqualified type this was copied from
  // functions
  Type* ret = nullptr;
  std::vector<Type*> params;
  bool variadic = false;
  bool old_style = false;  // "()" parameter list
  // structs and unions
  std::vector<Member*> members;
  std::string tag;
  bool complete = true;
  bool unaligned = false;
  struct Node* vla = nullptr;  // a variable-length array's element count  // aligned(n) below natural: accessed through a packed alias
  gcc_jit_type* jit = nullptr;
  gcc_jit_struct* jit_struct = nullptr;
};

struct Member {
  Type* ty;
  std::string name;
  Loc loc;
  int64_t offset = 0;
  gcc_jit_field* jit = nullptr;
};

bool is_integer(const Type* t);
bool is_flonum(const Type* t);
bool is_arith(const Type* t);
bool is_scalar(const Type* t);   // arithmetic or pointer
bool is_unsigned(const Type* t);
bool is_ptr_like(const Type* t); // pointer or array
std::string type_name(const Type* t);

// ---- syntax tree ------------------------------------------------------------------

enum class Nd {
  // expressions
  num, fnum, str, var, func_ref, add, sub, mul, div, mod, band, bor, bxor, shl, shr, eq, ne, lt,
  le, land, lor, lnot, bnot, neg, assign, op_assign, pre_inc, pre_dec, post_inc, post_dec, addr,
  deref, member, cond, comma, call, cast, vec_lit, compound_lit, vec_index, ptr_diff,
  // statements
  block, if_, for_, while_, do_, switch_, case_, break_, continue_, goto_, label, return_,
  expr_stmt, decl, omp, null_stmt
};

struct OmpClauses;
struct Initializer;

struct Node {
  Nd kind;
  Loc loc;
  Type* ty = nullptr;      // expressions: their type after conversions
  Node* lhs = nullptr;
  Node* rhs = nullptr;
  Nd op = Nd::add;          // op_assign: the arithmetic operator
  // if/for/while/do/switch/cond
  Node* cond = nullptr;
  Node* then = nullptr;
  Node* els = nullptr;
  Node* init = nullptr;
  Node* inc = nullptr;
  Node* body = nullptr;
  std::vector<Node*> stmts;  // block
  std::vector<Node*> args;   // call, vec_lit
  // switch: its cases; case: value
  std::vector<Node*> cases;
  Node* default_case = nullptr;
  int64_t case_val = 0;
  // leaves
  int64_t ival = 0;
  double fval = 0;
  std::string str;     // string literal bytes; goto/label name
  Obj* var = nullptr;  // var, func_ref, decl, call (the callee when direct)
  Member* mem = nullptr;
  Initializer* init_list = nullptr;  // decl, compound_lit
  OmpClauses* omp = nullptr;
  Node* bound = nullptr;  // decl of a VLA: its element count
};

struct Initializer {
  Type* ty = nullptr;
  Node* expr = nullptr;                 // a leaf
  std::vector<Initializer*> children;   // arrays, structs, vectors
  bool is_list = false;
};

enum class Storage { auto_, static_, extern_, typedef_ };

struct Obj {
  std::string name;
  Type* ty = nullptr;
  Loc loc;
  bool is_local = false;
  bool is_function = false;
  bool is_static = false;
  bool is_inline = false;
  bool always_inline = false;
  bool from_prelude = false;
  bool is_definition = false;
  bool implicit = false;     // a function declared by its first call (no prototype)
  bool address_taken = false;
  bool referenced = false;
  bool is_vla = false;
  int64_t align = 0;        // explicit alignment
  // functions
  std::vector<Obj*> params;
  Node* body = nullptr;
  // file-scope and static variables
  Initializer* init = nullptr;
  int id = 0;               // unique per compile, names static locals
  size_t lazy_body = 0;     // prelude functions: the body's '{', parsed on first call
};

enum class OmpKind {
  parallel, for_, parallel_for, barrier, critical, atomic, single, master, simd, sections,
  section, task, taskwait, flush, ordered, other
};

struct OmpClauses {
  OmpKind kind = OmpKind::other;
  std::string directive;   // as written, for diagnostics and features
  Node* num_threads = nullptr;
  Node* if_clause = nullptr;
  std::string schedule = "static";
  Node* chunk = nullptr;
  bool schedule_given = false;
  int collapse = 1;
  bool nowait = false;
  bool simd = false;       // "... for simd": a hint
  std::vector<Obj*> priv, firstpriv, lastpriv, shared;
  struct Reduction { std::string op; Obj* var; Loc loc; };
  std::vector<Reduction> reductions;
  std::string atomic_kind = "update";
  std::string critical_name;
};

struct Program {
  std::vector<Obj*> globals;    // variables and functions, in order
  std::deque<Node> nodes;       // storage
  std::deque<Type> types;
  std::deque<Obj> objs;
  std::deque<Member> members;
  std::deque<Initializer> inits;
  std::deque<OmpClauses> omps;
  std::vector<std::string> includes;  // headers included, in order
};

// Parsing also builds the program's types and checks them.
void parse(std::vector<Token> toks, Program& prog);

// Library calls outside the allow-list, found before any code is generated.
void check_calls(const Program& prog);

// Preprocesses and parses the prelude and the kernel (front.cpp); throws Error.
void parse_source(const std::string& source, const Options& opts, Program& prog);
// The checks of a parsed kernel: the allow-list, the intrinsics the target enables.
void check_program(const Program& prog, const Options& opts);
// The techniques a parsed kernel uses (features.cpp): what kernelc::features returns.
nlohmann::json program_features(const Program& prog);
const char* intern(const std::string& s);  // a file name that lives as long as the process

}  // namespace kernelc
