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

// What a relocatable object (gcc -c) holds that would run at load time once linked:
// sections of constructors, destructors, init and fini code, by type or by name. And the
// symbols it defines. Throws like read_elf_imports.
struct ObjectCode {
  std::vector<std::string> load_time_code;
  std::vector<std::string> defined;
};
ObjectCode read_object_code(const std::string& path);

}  // namespace bench
