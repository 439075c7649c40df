#include "bench/elf.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  throw std::runtime_error(path + ": not a valid shared object: " + why);
}

}  // namespace

ElfImports read_elf_imports(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  Mapped m;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    m.size = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) m.data = static_cast<const unsigned char*>(p);
  }
  close(fd);
  if (!m.data) bad(path, "empty or unreadable");

  // Every offset read below is checked against the file size.
  auto in = [&](uint64_t off, uint64_t len) { return off <= m.size && len <= m.size - off; };
  if (!in(0, sizeof(Elf64_Ehdr))) bad(path, "too short");
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(m.data);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
    bad(path, "not a 64-bit ELF file");
  if (eh->e_type != ET_DYN) bad(path, "not a shared object");
  if (eh->e_shentsize != sizeof(Elf64_Shdr) || !in(eh->e_shoff, uint64_t(eh->e_shnum) * sizeof(Elf64_Shdr)))
    bad(path, "section headers out of range");
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(m.data + eh->e_shoff);
  auto section = [&](uint32_t i) -> const Elf64_Shdr& {
    if (i >= eh->e_shnum) bad(path, "section index out of range");
    return sh[i];
  };
  auto str = [&](const Elf64_Shdr& strtab, uint64_t off) -> std::string {
    if (off >= strtab.sh_size || !in(strtab.sh_offset, strtab.sh_size)) bad(path, "string out of range");
    const char* s = reinterpret_cast<const char*>(m.data + strtab.sh_offset + off);
    size_t max = strtab.sh_size - off;
    return std::string(s, strnlen(s, max));
  };

  ElfImports out;
  for (uint32_t i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& s = sh[i];
    if (s.sh_type == SHT_DYNSYM) {
      if (s.sh_entsize != sizeof(Elf64_Sym) || !in(s.sh_offset, s.sh_size)) bad(path, "bad .dynsym");
      const Elf64_Shdr& strtab = section(s.sh_link);
      const auto* syms = reinterpret_cast<const Elf64_Sym*>(m.data + s.sh_offset);
      for (size_t k = 1; k < s.sh_size / sizeof(Elf64_Sym); ++k) {
        std::string name = str(strtab, syms[k].st_name);
        if (name.empty()) continue;
        int type = ELF64_ST_TYPE(syms[k].st_info);
        if (syms[k].st_shndx == SHN_UNDEF) out.undefined.push_back(name);
        else if (type == STT_GNU_IFUNC) out.load_time_code.push_back("an IFUNC resolver (" + name + ")");
        else if (type == STT_FUNC) out.functions.push_back(name);
      }
    } else if (s.sh_type == SHT_DYNAMIC) {
      if (s.sh_entsize != sizeof(Elf64_Dyn) || !in(s.sh_offset, s.sh_size)) bad(path, "bad .dynamic");
      const Elf64_Shdr& strtab = section(s.sh_link);
      const auto* dyn = reinterpret_cast<const Elf64_Dyn*>(m.data + s.sh_offset);
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Dyn) && dyn[k].d_tag != DT_NULL; ++k) {
        switch (dyn[k].d_tag) {
          case DT_NEEDED: out.needed.push_back(str(strtab, dyn[k].d_un.d_val)); break;
          case DT_INIT: out.load_time_code.push_back("an init function (DT_INIT)"); break;
          case DT_FINI: out.load_time_code.push_back("a fini function (DT_FINI)"); break;
          case DT_INIT_ARRAYSZ:
            if (dyn[k].d_un.d_val) out.load_time_code.push_back("a constructor (.init_array)");
            break;
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
      if (s.sh_entsize != sizeof(Elf64_Rela) || !in(s.sh_offset, s.sh_size)) bad(path, "bad relocations");
      const auto* rel = reinterpret_cast<const Elf64_Rela*>(m.data + s.sh_offset);
      for (size_t k = 0; k < s.sh_size / sizeof(Elf64_Rela); ++k)
        if (ELF64_R_TYPE(rel[k].r_info) == R_X86_64_IRELATIVE) {
          out.load_time_code.push_back("an IFUNC relocation");
          break;
        }
    }
  }
  auto uniq = [](std::vector<std::string>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  uniq(out.undefined);
  uniq(out.load_time_code);
  uniq(out.functions);
  return out;
}

}  // namespace bench
