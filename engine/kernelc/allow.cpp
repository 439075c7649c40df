// The allow-list on the tree: a kernel may call what bench's allowed libraries provide
// (bench::symbol_allowed, the list every back end shares), nothing else. Checked before
// any code is generated, so a violation is reported with the call's location.
#include "compile/compiler.hpp"
#include "kernelc/walk.hpp"

namespace kernelc {

void check_calls(const Program& prog) {
  for (Obj* fn : prog.globals) {
    if (!fn->is_function || !fn->body || fn->from_prelude) continue;
    walk(fn->body, [&](Node* n) {
      if (n->kind == Nd::call && n->var && !n->var->is_definition) {
        const std::string& name = n->var->name;
        if (!bench::symbol_allowed(name)) {
          if (bench::provided_by_a_library(name))
            throw Error(Status::library_violation, n->loc, bench::library_violation_message(name));
          throw Error(Status::compile_error, n->loc, "undefined reference to `" + name + "'");
        }
        // An allowed function no header of ours declares (exp10, lroundf, ...): called
        // through an implicit int declaration it would be miscompiled, where gcc knows
        // its type; gcc compiles it instead.
        if (n->var->implicit)
          throw Error(Status::unsupported, n->loc,
                      "call to '" + name + "' without a declaration (the front end's headers do not declare it)");
      }
      if (n->kind == Nd::var && !n->var->is_local && !n->var->is_definition)
        throw Error(Status::library_violation, n->loc,
                    "reference to external variable '" + n->var->name + "', which is not defined in the kernel");
      return true;
    });
  }
}

}  // namespace kernelc
