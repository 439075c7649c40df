#include "compile/elf_reader.hpp"

#include "compile/compiler.hpp"  // allowed_constructors

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <cstring>
#include <stdexcept>

namespace bench {

namespace {

struct Mapped {
  const unsigned char* data = nullptr;
  size_t size = 0;
  ~Mapped() {
    if (data) munmap(const_cast<unsigned char*>(data), size);
  }
};

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw std::runtime_error(path + ": not a valid ELF object: " + why);
}

// A mapped 64-bit ELF file of the type asked for, with range-checked access to its
// sections and strings.
struct Elf {
  std::string path;
  Mapped m;
  const Elf64_Ehdr* eh = nullptr;
  const Elf64_Shdr* sh = nullptr;

  Elf(const std::string& p, uint16_t type, const char* what) : path(p) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      m.size = static_cast<size_t>(st.st_size);
      void* q = mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (q != MAP_FAILED) m.data = static_cast<const unsigned char*>(q);
    }
    close(fd);
    if (!m.data) bad(path, "empty or unreadable");
    if (!in(0, sizeof(Elf64_Ehdr))) bad(path, "too short");
    eh = reinterpret_cast<const Elf64_Ehdr*>(m.data);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
      bad(path, "not a 64-bit ELF file");
    if (eh->e_type != type) bad(path, std::string("not ") + what);
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || !in(eh->e_shoff, uint64_t(eh->e_shnum) * sizeof(Elf64_Shdr)))
      bad(path, "section headers out of range");
    sh = reinterpret_cast<const Elf64_Shdr*>(m.data + eh->e_shoff);
  }
  // Every offset read is checked against the file size.
  bool in(uint64_t off, uint64_t len) const { return off <= m.size && len <= m.size - off; }
  const Elf64_Shdr& section(uint32_t i) const {
    if (i >= eh->e_shnum) bad(path, "section index out of range");
    return sh[i];
  }
  std::string str(const Elf64_Shdr& strtab, uint64_t off) const {
    if (off >= strtab.sh_size || !in(strtab.sh_offset, strtab.sh_size)) bad(path, "string out of range");
    const char* s = reinterpret_cast<const char*>(m.data + strtab.sh_offset + off);
    return std::string(s, strnlen(s, strtab.sh_size - off));
  }
  std::string section_name(const Elf64_Shdr& s) const {
    if (eh->e_shstrndx == SHN_UNDEF) return "";
    return str(section(eh->e_shstrndx), s.sh_name);
  }
  template <class T>
  const T* table(const Elf64_Shdr& s, const char* what) const {
    if (s.sh_entsize != sizeof(T) || !in(s.sh_offset, s.sh_size)) bad(path, std::string("bad ") + what);
    return reinterpret_cast<const T*>(m.data + s.sh_offset);
  }
  // The 8 bytes at virtual address `addr`, from the section that holds it.
  bool read_address(uint64_t addr, uint64_t& out) const {
    for (uint32_t i = 0; i < eh->e_shnum; ++i) {
      const Elf64_Shdr& s = sh[i];
      if (s.sh_type == SHT_NOBITS || addr < s.sh_addr || addr + 8 > s.sh_addr + s.sh_size) continue;
      if (!in(s.sh_offset + (addr - s.sh_addr), 8)) bad(path, "address out of range");
      std::memcpy(&out, m.data + s.sh_offset + (addr - s.sh_addr), 8);
      return true;
    }
    return false;
  }
};

void uniq(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The functions an .init_array of `count` entries at `addr` calls, by name: each slot's
// value is its relocation's addend (a shared object's slots are filled by RELATIVE
// relocations) or the slot itself, named by .symtab or .dynsym. "" where none names it.
std::vector<std::string> constructor_names(const Elf& e, uint64_t addr, uint64_t count) {
  std::map<uint64_t, uint64_t> relative;  // slot -> addend
  std::map<uint64_t, std::string> by_address;
  for (uint32_t i = 0; i < e.eh->e_shnum; ++i) {
    const Elf64_Shdr& s = e.sh[i];
    if (s.sh_type == SHT_RELA) {
      const auto* rel = e.table<Elf64_Rela>(s, "relocations");
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Rela); ++k)
        if (ELF64_R_TYPE(rel[k].r_info) == R_X86_64_RELATIVE) relative[rel[k].r_offset] = rel[k].r_addend;
    } else if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) {
      const auto* syms = e.table<Elf64_Sym>(s, "symbol table");
      const Elf64_Shdr& strtab = e.section(s.sh_link);
      for (size_t k = 1; k < s.sh_size / sizeof(Elf64_Sym); ++k)
        if (ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC && syms[k].st_shndx != SHN_UNDEF)
          by_address.emplace(syms[k].st_value, e.str(strtab, syms[k].st_name));
    }
  }
  std::vector<std::string> names;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t slot = addr + 8 * i, target = 0;
    if (auto r = relative.find(slot); r != relative.end()) target = r->second;
    else if (!e.read_address(slot, target)) target = 0;
    auto f = by_address.find(target);
    names.push_back(f == by_address.end() ? "" : f->second);
  }
  return names;
}

}  // namespace

ElfImports read_elf_imports(const std::string& path) {
  Elf e(path, ET_DYN, "a shared object");
  ElfImports out;
  uint64_t init_array = 0, init_array_bytes = 0;
  for (uint32_t i = 0; i < e.eh->e_shnum; ++i) {
    const Elf64_Shdr& s = e.sh[i];
    if (s.sh_type == SHT_DYNSYM) {
      const auto* syms = e.table<Elf64_Sym>(s, ".dynsym");
      const Elf64_Shdr& strtab = e.section(s.sh_link);
      for (size_t k = 1; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        std::string name = e.str(strtab, syms[k].st_name);
        if (name.empty()) continue;
        int type = ELF64_ST_TYPE(syms[k].st_info);
        if (syms[k].st_shndx == SHN_UNDEF) out.undefined.push_back(name);
        else if (type == STT_GNU_IFUNC) out.load_time_code.push_back("an IFUNC resolver (" + name + ")");
        else if (type == STT_FUNC) out.functions.push_back(name);
      }
    } else if (s.sh_type == SHT_DYNAMIC) {
      const auto* dyn = e.table<Elf64_Dyn>(s, ".dynamic");
      const Elf64_Shdr& strtab = e.section(s.sh_link);
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
        switch (dyn[k].d_tag) {
          case DT_NEEDED: out.needed.push_back(e.str(strtab, dyn[k].d_un.d_val)); break;
          case DT_INIT: out.load_time_code.push_back("an init function (DT_INIT)"); break;
          case DT_FINI: out.load_time_code.push_back("a fini function (DT_FINI)"); break;
          case DT_INIT_ARRAY: init_array = dyn[k].d_un.d_ptr; break;
          case DT_INIT_ARRAYSZ: init_array_bytes = dyn[k].d_un.d_val; break;
          case DT_FINI_ARRAYSZ:
            if (dyn[k].d_un.d_val) out.load_time_code.push_back("a destructor (.fini_array)");
            break;
          case DT_PREINIT_ARRAYSZ:
            if (dyn[k].d_un.d_val) out.load_time_code.push_back("a pre-initializer (.preinit_array)");
            break;
          default: break;
        }
      }
    } else if (s.sh_type == SHT_RELA) {
      const auto* rel = e.table<Elf64_Rela>(s, "relocations");
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Rela); ++k)
        if (ELF64_R_TYPE(rel[k].r_info) == R_X86_64_IRELATIVE) {
          out.load_time_code.push_back("an IFUNC relocation");
          break;
        }
    }
  }
  if (init_array_bytes > 0) {
    if (init_array_bytes % 8 != 0 || init_array_bytes > (1u << 20)) bad(path, "bad .init_array size");
    out.constructors = constructor_names(e, init_array, init_array_bytes / 8);
  }
  uniq(out.undefined);
  uniq(out.load_time_code);
  uniq(out.functions);
  return out;
}

ObjectCode read_object_code(const std::string& path) {
  Elf e(path, ET_REL, "a relocatable object");
  ObjectCode out;
  for (uint32_t i = 0; i < e.eh->e_shnum; ++i) {
    const Elf64_Shdr& s = e.sh[i];
    std::string name = e.section_name(s);
    auto named = [&](const char* prefix) { return name == prefix || name.rfind(std::string(prefix) + ".", 0) == 0; };
    if (s.sh_type == SHT_INIT_ARRAY || named(".init_array") || named(".ctors"))
      out.load_time_code.push_back("a constructor (" + name + ")");
    else if (s.sh_type == SHT_PREINIT_ARRAY || named(".preinit_array"))
      out.load_time_code.push_back("a pre-initializer (" + name + ")");
    else if (s.sh_type == SHT_FINI_ARRAY || named(".fini_array") || named(".dtors"))
      out.load_time_code.push_back("a destructor (" + name + ")");
    else if (named(".init") || named(".fini"))
      out.load_time_code.push_back("init or fini code (" + name + ")");
    if (s.sh_type == SHT_SYMTAB) {
      const auto* syms = e.table<Elf64_Sym>(s, ".symtab");
      const Elf64_Shdr& strtab = e.section(s.sh_link);
      for (size_t k = 1; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        if (syms[k].st_shndx == SHN_UNDEF) continue;
        if (ELF64_ST_TYPE(syms[k].st_info) == STT_GNU_IFUNC)
          out.load_time_code.push_back("an IFUNC resolver (" + e.str(strtab, syms[k].st_name) + ")");
        std::string n = e.str(strtab, syms[k].st_name);
        if (!n.empty()) out.defined.push_back(n);
      }
    }
  }
  uniq(out.load_time_code);
  uniq(out.defined);
  return out;
}

std::vector<std::string> load_time_violations(const ElfImports& imports) {
  std::vector<std::string> out = imports.load_time_code;
  for (const auto& name : imports.constructors)
    if (!constructor_allowed(name))
      out.push_back("a constructor (" + (name.empty() ? std::string(".init_array") : name) + ")");
  return out;
}

std::string load_time_message(const std::vector<std::string>& violations) {
  std::string list;
  for (size_t i = 0; i < violations.size(); ++i)
    list += (i == 0 ? "" : ", ") + violations[i];
  return "defines " + list + ", code that would run when the kernel is loaded";
}

}  // namespace bench
