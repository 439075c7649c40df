#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "compile/compiler.hpp"

namespace bench {

namespace {

struct Search {
  uintptr_t address;
  std::string build_id;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, 64 bits
  bool found = false;
};

void fnv1a(uint64_t& h, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
}

std::string hex(const unsigned char* p, size_t n) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// The GNU build ID among the notes of one PT_NOTE segment.
std::string build_id_in(const unsigned char* p, size_t size) {
  size_t at = 0;
  while (at + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) h;
    std::memcpy(&h, p + at, sizeof h);
    size_t name_at = at + sizeof h, desc_at = name_at + ((h.n_namesz + 3) & ~size_t(3));
    size_t next = desc_at + ((h.n_descsz + 3) & ~size_t(3));
    if (next > size) break;
    if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && std::memcmp(p + name_at, "GNU", 4) == 0)
      return hex(p + desc_at, h.n_descsz);
    at = next;
  }
  return "";
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && s->address >= lo && s->address < lo + ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  s->found = true;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    if (ph.p_type == PT_NOTE && s->build_id.empty()) s->build_id = build_id_in(p, ph.p_filesz);
    if (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) {
      uint64_t size = ph.p_filesz;
      fnv1a(s->hash, reinterpret_cast<const unsigned char*>(&size), sizeof size);
      fnv1a(s->hash, p, ph.p_filesz);
    }
  }
  return 1;
}

}  // namespace

std::string code_identity(const void* entry) {
  if (!entry) return "";
  Search s{reinterpret_cast<uintptr_t>(entry), ""};
  dl_iterate_phdr(visit, &s);
  if (!s.found || s.build_id.empty()) return "";
  unsigned char h[8];
  std::memcpy(h, &s.hash, sizeof h);
  return s.build_id + "-" + hex(h, sizeof h);
}

}  // namespace bench
