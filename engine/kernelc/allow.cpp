// The allow-list: a kernel may call the math library, memory allocation, memset/memcpy/
// memmove and the OpenMP runtime, nothing else. Checked on the tree, before any code
// is generated, so a violation is reported with the call's location.
#include <set>

#include "kernelc/walk.hpp"

namespace kernelc {

bool callee_allowed(const std::string& name) {
  static const std::set<std::string> allowed = {
      "malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "free", "memset", "memcpy",
      "memmove", "abs", "labs", "llabs",
      "sqrt", "cbrt", "fabs", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin",
      "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "floor", "ceil", "round",
      "trunc", "rint", "nearbyint", "fmod", "fma", "fmin", "fmax", "fdim", "hypot", "copysign",
      "ldexp", "erf", "erfc", "tgamma", "lgamma", "lround", "lrint", "sqrtf", "fabsf", "expf",
      "logf", "powf", "fmaf", "fminf", "fmaxf", "floorf", "ceilf", "sinf", "cosf", "tanhf", "roundf"};
  return allowed.count(name) || name.rfind("omp_", 0) == 0;
}

void check_calls(const Program& prog) {
  for (Obj* fn : prog.globals) {
    if (!fn->is_function || !fn->body || fn->from_prelude) continue;
    walk(fn->body, [&](Node* n) {
      if (n->kind == Nd::call && n->var && !n->var->is_definition && !callee_allowed(n->var->name))
        throw Error(Status::library_violation, n->loc,
                    "call to '" + n->var->name +
                        "', which is outside the allowed libraries (math, malloc/calloc/aligned_alloc/"
                        "posix_memalign/free, memset/memcpy/memmove, the OpenMP runtime)");
      if (n->kind == Nd::var && !n->var->is_local && !n->var->is_definition)
        throw Error(Status::library_violation, n->loc,
                    "reference to external variable '" + n->var->name + "', which is not defined in the kernel");
      return true;
    });
  }
}

}  // namespace kernelc
