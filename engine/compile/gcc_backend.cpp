// The "gcc" back end: the system compiler driven as a subprocess into a shared object,
// inspected as a file, and only then loaded.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <cctype>

#include "compile/compiler.hpp"
#include "compile/elf_reader.hpp"
#include "compile/run_command.hpp"
#include "files/files.hpp"

namespace bench {

namespace {

// Libraries a kernel object may depend on: what the driver links for -fopenmp -lm.
bool library_allowed(const std::string& soname) {
  for (const char* ok : {"libc.so.6", "libm.so.6", "libmvec.so.1", "libgomp.so.1", "libgcc_s.so.1",
                         "ld-linux-x86-64.so.2" /* __tls_get_addr */})
    if (soname == ok) return true;
  return false;
}

// Where a kernel's #include may lead: the compiler's and the C library's headers.
bool standard_header(const std::string& path) {
  for (const char* dir : {"/usr/include/", "/usr/lib/gcc/", "/usr/local/include/"})
    if (path.rfind(dir, 0) == 0 && path.find("/../") == std::string::npos) return true;
  return false;
}

// The file a diagnostic line is about ("FILE:LINE:COL: ...", "In file included from
// FILE:LINE"), or "" for other lines (source quotes, carets, notes without a place).
std::string diagnostic_file(const std::string& line) {
  std::string rest = line;
  for (const char* lead : {"In file included from ", "                 from "})
    if (rest.rfind(lead, 0) == 0) rest = rest.substr(std::string(lead).size());
  auto colon = rest.find(':');
  if (colon == std::string::npos || colon == 0 || rest[0] == ' ') return "";
  if (colon + 1 >= rest.size() || !std::isdigit(static_cast<unsigned char>(rest[colon + 1]))) return "";
  return rest.substr(0, colon);
}

// gcc's messages without anything of files that are neither the kernel nor a standard
// header (an #include of a host file would otherwise quote it back into the prompts).
std::string without_foreign_files(const std::string& output) {
  std::string out, line;
  bool hiding = false;
  std::istringstream lines(output);
  while (std::getline(lines, line)) {
    std::string file = diagnostic_file(line);
    if (!file.empty()) {
      hiding = file != "kernel.c" && !standard_header(file);
      if (hiding) {
        out += "kernel.c: error: a diagnostic in a file that is not a standard header (not shown): "
               "kernels may include the standard headers only\n";
        continue;
      }
    }
    if (!hiding) out += line + "\n";
  }
  return out;
}

// The headers the compile read (gcc -MD writes them to kernel.d), outside the standard ones.
std::vector<std::string> foreign_includes(const std::string& depfile) {
  std::ifstream f(depfile);
  std::vector<std::string> out;
  for (std::string w; f >> w;) {
    if (w == "\\" || w.back() == ':' || w == "kernel.c") continue;
    if (!standard_header(w)) out.push_back(w);
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Runs one step of the compile in `dir`; false (with the diagnostics in k) when it failed.
bool run_step(const std::vector<std::string>& argv, const std::string& dir, CompiledKernel& k) {
  ProcessResult r;
  try {
    r = run_process(argv, {"TMPDIR=" + dir, "LC_ALL=C"}, dir);
  } catch (const std::exception& e) {
    k.diagnostics += e.what();
    return false;
  }
  k.diagnostics += without_foreign_files(r.output);
  if (r.status == 0) return true;
  if (k.diagnostics.empty()) k.diagnostics = "gcc failed without a message";
  return false;
}

class GccBackend final : public Backend {
 public:
  const char* name() const override { return "gcc"; }

  CompiledKernel compile(const std::string& source, const CompileOptions& opts) override {
    auto t0 = std::chrono::steady_clock::now();
    CompiledKernel k;
    k.backend = "gcc";
    auto done = [&]() -> CompiledKernel& {
      k.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      return k;
    };
    if (!optimisation_level_known(opts.opt)) {
      k.diagnostics = "gcc: " + optimisation_level_message(opts.opt);
      return done();
    }

    // A directory of our own unless the caller gave one (the sandbox removes its own).
    std::string dir = opts.workdir;
    std::string own;
    if (dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/engine-gcc-XXXXXX";
      if (!mkdtemp(tmpl.data())) {
        k.diagnostics = std::string("gcc: cannot create a temporary directory: ") + std::strerror(errno);
        return done();
      }
      dir = own = tmpl;
    }
    struct RemoveDir {
      std::string d;
      ~RemoveDir() {
        if (!d.empty()) files::remove_tree(d);
      }
    } remove_own{own};

    const std::string src = dir + "/kernel.c", so = dir + "/kernel.so";
    {
      std::ofstream f(src, std::ios::binary);
      f << source;
      if (!f) {
        k.diagnostics = "gcc: cannot write " + src;
        return done();
      }
    }
    // Compiled alone first, so any load-time code of the kernel's own is seen in its
    // object, then linked; -nostartfiles: no crt init/fini code. What the link adds beyond
    // the object is the toolchain's (libgcc's CPU model constructor), allowed by name.
    // -U_FORTIFY_SOURCE: Ubuntu's gcc fortifies by default, turning printf into
    // __printf_chk and memcpy into __memcpy_chk; the same source must reference the same
    // names (and get the same verdict) on every distribution.
    std::vector<std::string> argv = {"gcc", "-c", "-fPIC", "-U_FORTIFY_SOURCE", "-" + opts.opt,
                                     "-fdiagnostics-color=never", "-MD", "-MF", "kernel.d",
                                     "-o", "kernel.o", "kernel.c", remarks_flag("remarks.txt")};
    argv.insert(argv.begin() + 5, opts.march.begin(), opts.march.end());
    if (opts.openmp) argv.push_back("-fopenmp");
    if (!run_step(argv, dir, k)) return done();
    k.remarks = read_remarks(dir + "/remarks.txt");
    if (auto foreign = foreign_includes(dir + "/kernel.d"); !foreign.empty()) {
      k.diagnostics += "kernel.c: error: includes " + std::to_string(foreign.size()) +
                       " file(s) that are not standard headers; kernels may include the standard headers only\n";
      return done();
    }
    ObjectCode object;
    try {
      object = read_object_code(dir + "/kernel.o");
    } catch (const std::exception& e) {
      k.diagnostics += e.what();
      return done();
    }
    for (const auto& name : object.defined)
      if (constructor_allowed(name)) object.load_time_code.push_back("the toolchain's constructor " + name);
    if (!object.load_time_code.empty()) {
      k.status = CompileStatus::library_violation;
      k.diagnostics += "kernel.c: error: defines " + join(object.load_time_code) +
                       ", code that would run when the kernel is loaded\n";
      return done();
    }
    std::vector<std::string> link = {"gcc", "-shared", "-nostartfiles", "-o", "kernel.so", "kernel.o"};
    if (opts.openmp) link.push_back("-fopenmp");
    link.push_back("-lm");
    if (!run_step(link, dir, k)) return done();

    ElfImports imp;
    try {
      imp = read_elf_imports(so);
    } catch (const std::exception& e) {
      k.diagnostics += e.what();
      return done();
    }
    k.external_symbols = imp.undefined;
    std::vector<std::string> forbidden, undefined;
    for (const auto& s : imp.undefined)
      if (!symbol_allowed(s)) (provided_by_a_library(s) ? forbidden : undefined).push_back(s);
    std::vector<std::string> libs;
    for (const auto& l : imp.needed)
      if (!library_allowed(l)) libs.push_back(l);
    // The rule every back end applies to the linked object (the kernel's object had none:
    // what is left is the link's, DT_INIT from a function named _init included).
    const std::vector<std::string> load_time = load_time_violations(imp);
    if (!forbidden.empty() || !libs.empty() || !load_time.empty()) {
      k.status = CompileStatus::library_violation;
      for (const auto& s : forbidden) k.diagnostics += "kernel.c: error: " + library_violation_message(s) + "\n";
      if (!libs.empty()) k.diagnostics += "kernel.c: error: depends on " + join(libs) + "\n";
      if (!load_time.empty()) k.diagnostics += "kernel.c: error: " + load_time_message(load_time) + "\n";
      return done();
    }
    if (!undefined.empty()) {
      for (const auto& s : undefined) k.diagnostics += "kernel.c: error: undefined reference to `" + s + "'\n";
      return done();
    }
    if (std::find(imp.functions.begin(), imp.functions.end(), opts.entry) == imp.functions.end()) {
      k.diagnostics += "kernel.c: error: no function named '" + opts.entry + "' is defined\n";
      return done();
    }
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* e = dlerror();
      k.diagnostics += std::string("cannot load the kernel: ") + (e ? e : "unknown error") + "\n";
      return done();
    }
    k.code = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
    k.entry = dlsym(handle, opts.entry.c_str());
    if (!k.entry) {
      k.diagnostics += "kernel.c: error: '" + opts.entry + "' cannot be resolved\n";
      k.code.reset();
      return done();
    }
    k.status = CompileStatus::ok;
    return done();
  }
};

}  // namespace

std::unique_ptr<Backend> make_gcc_backend() { return std::make_unique<GccBackend>(); }

}  // namespace bench
