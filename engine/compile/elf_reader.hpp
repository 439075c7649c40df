// What a compiled kernel (an ELF shared object) asks of the outside world, read from the
// file itself before it is loaded: loading runs code (constructors, IFUNC resolvers)
// and resolves symbols, so the sandbox must decide about the object first.
#pragma once

#include <string>
#include <vector>

namespace bench {

struct ElfImports {
  std::vector<std::string> undefined;  // undefined dynamic symbols (what it calls outside)
  std::vector<std::string> needed;     // DT_NEEDED libraries
  std::vector<std::string> load_time_code;  // why loading would run the object's own code
                                            // (destructors, init code, IFUNC), but for:
  std::vector<std::string> constructors;    // the .init_array entries' function names
                                            // ("" where no symbol names one)
  std::vector<std::string> functions;       // defined function symbols
};

// Throws std::runtime_error when the file is not a well-formed 64-bit ELF object.
ElfImports read_elf_imports(const std::string& path);

// The one rule of every back end: no code of the kernel's runs before its first call.
// What loading the linked object would run that is not the toolchain's own (its
// load_time_code: DT_INIT, DT_FINI, .fini_array, .preinit_array, IFUNC resolvers; and
// every constructor but allowed_constructors()), in words; empty when nothing. A back end
// asks this of the object before it is loaded, and refuses a nonempty answer as a
// library violation with load_time_message's words.
std::vector<std::string> load_time_violations(const ElfImports& imports);
// "defines X, Y, code that would run when the kernel is loaded"
std::string load_time_message(const std::vector<std::string>& violations);

// What a relocatable object (gcc -c) holds that would run at load time once linked:
// sections of constructors, destructors, init and fini code, by type or by name. And the
// symbols it defines. Throws like read_elf_imports.
struct ObjectCode {
  std::vector<std::string> load_time_code;
  std::vector<std::string> defined;
};
ObjectCode read_object_code(const std::string& path);

}  // namespace bench
