// The compiler interface of the evaluation: a back end turns kernel source into loaded
// machine code. Two back ends exist: "gcc" (the system compiler as a subprocess into a
// shared object) and "gccjit" (engine/kernelc, in memory through libgccjit).
//
// A back end never runs the kernel; the sandbox does. compile() is called inside the
// kernel's child process, so a back end may leave the process in any state except one
// that lets the kernel escape the sandbox.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bench {

struct CompileOptions {
  std::string opt = "O3";             // optimisation_levels()
  std::vector<std::string> march;     // explicit target flags, e.g. {"-march=sapphirerapids"};
                                      // resolved from the host CPU before reaching a back end
  bool openmp = true;                 // link the OpenMP runtime (kernels may use it)
  std::string entry = "matmul_optimized";  // the function to return
  std::string workdir;  // a private directory for temporary files, removed by the caller
                        // (the sandbox kills and cleans up after a back end that hangs);
                        // empty: the back end makes and removes its own
};

enum class CompileStatus {
  ok,
  compile_error,      // invalid source; diagnostics say where and why
  library_violation,  // references something outside the allow-list; diagnostics name it
  unsupported,        // valid C the back end cannot handle yet; the caller may fall back
};

const char* to_string(CompileStatus s);

struct CompiledKernel {
  CompileStatus status = CompileStatus::compile_error;
  std::string backend;      // which back end produced this
  std::string diagnostics;  // "file:line:col: error: ..." lines, as a compiler prints them
  void* entry = nullptr;    // the entry function when ok
  double compile_ms = 0;
  std::vector<std::string> external_symbols;  // what the code references outside itself
  std::shared_ptr<void> code;  // keeps the machine code loaded while held
  nlohmann::json features;     // the techniques of the tree a back end that parses compiled
                               // (see kernelc::features); null from one that reads none
  std::string remarks;         // gcc's remarks on the kernel's loops (read_remarks); "" if none
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual CompiledKernel compile(const std::string& source, const CompileOptions& opts) = 0;
  // The techniques the source uses (see kernelc::features), read without compiling, for
  // back ends that read the program's structure; null otherwise. Asked, in the kernel's
  // child, only of a kernel another back end compiled: compile() reports its own.
  virtual nlohmann::json features(const std::string& source) { (void)source; return nullptr; }
};

// ---- the allowed libraries --------------------------------------------------
// The one rule for what a kernel may reference outside itself, for every back end, for
// the evaluation's check of their references, and for the scripts (bench.symbol_allowed):
// libm (C99, with its float and long double variants, and libmvec's vector variants),
// memory allocation, memset/memcpy/memmove, abs/labs/llabs, the OpenMP runtime, and what
// the compiler itself emits for such code. Anything else is a library violation.
struct AllowedLibrary {
  std::string name;                   // how diagnostics call it; "": by its symbols
  std::vector<std::string> symbols;   // the exact names it provides
  std::vector<std::string> prefixes;  // and every longer name starting with one of these
  bool shown = true;                  // named in diagnostics (false: compiler-emitted names)
};
const std::vector<AllowedLibrary>& allowed_libraries();
bool symbol_allowed(const std::string& name);
// The allowed libraries in words, made from the list: "libm, malloc/calloc/..., ...".
const std::string& allowed_libraries_text();
// The libraries a kernel is measured against (the yardsticks the task specs name, and
// OpenBLAS for matmul) and others of their kind: calling one by its own names is a library
// call, though none is loaded where a kernel compiles. `links`: the names a spec's
// yardstick links (-lNAME) that are this library; `prefixes`: its names start so;
// `fortran`: it also provides the Fortran BLAS and LAPACK names (dgemm_, dpotrf_, ...).
struct YardstickLibrary {
  std::string name;
  std::vector<std::string> links;
  std::vector<std::string> prefixes;
  bool fortran = false;
};
const std::vector<YardstickLibrary>& yardstick_libraries();
// Whether a name outside them is a library's (calling it is a library violation) or
// nobody's (an undefined reference: the kernel's own error): a yardstick library's name,
// or one a library loaded in this process defines. Every back end asks this.
bool provided_by_a_library(const std::string& name);
// What every back end says of a call outside them, after its "FILE[:LINE:COL]: error: ":
// "call to 'NAME', which is outside the allowed libraries: libm, ...".
std::string library_violation_message(const std::string& name);

// ---- code that may run at load time -----------------------------------------
// A kernel's own object may hold no load-time code. The toolchain adds some without the
// kernel's asking; these constructors may run: libgcc's CPU model (__cpu_indicator_init,
// which __builtin_cpu_supports and __builtin_cpu_is bring in from libgcc.a).
const std::vector<std::string>& allowed_constructors();
bool constructor_allowed(const std::string& name);

// ---- optimisation levels ---------------------------------------------------
// The levels a kernel may be compiled at, for every back end and every caller: "O0",
// "O1", "O2", "O3", "Os". The one check, and the one message for a level outside them.
const std::vector<std::string>& optimisation_levels();
bool optimisation_level_known(const std::string& opt);
std::string optimisation_level_message(const std::string& opt);  // "opt must be one of ..."

// ---- optimisation remarks ---------------------------------------------------
// gcc's remarks on the kernel's loops, which every gcc back end asks for: the flag that
// writes them to `file` (vectorised loops, and loops not vectorised with the reason), and
// the text a result carries, read from that file: repeats dropped, the vectorised loops
// first, at most max_chars (a last line says how many were left out).
std::string remarks_flag(const std::string& file);
std::string read_remarks(const std::string& file, size_t max_chars = 1500);

// ---- the identity of loaded code --------------------------------------------
// Names the machine code a back end loaded, whatever source it came from: the linker's
// build ID (a hash of the whole shared object, its data included) and a hash of the
// object's read-only segments as mapped (position-independent code, so no relocation
// changes them). Two kernels with the same identity run the same instructions on the same
// constants. "" when the object carries no build ID: such code is never taken for another.
// Read before any of the kernel's code has run.
std::string code_identity(const void* entry);

// ---- back ends by name ------------------------------------------------------
// Kernels are compiled in the evaluation process (engine-sandbox), which registers the
// back ends the engine is built with; a program's own registrations say which names its
// options accept. Registering a name twice throws.
void register_backend(std::unique_ptr<Backend> backend);
Backend* find_backend(const std::string& name);  // nullptr when none has that name
std::vector<std::string> backend_names();
// "gccjit" once registered (the in-memory front end), else "gcc".
std::string default_backend();

}  // namespace bench
