#include "task/trusted.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <fstream>
#include <stdexcept>

#include "compile/run_command.hpp"
#include "files/files.hpp"

namespace bench {

void* load_trusted(const std::string& what, const std::string& source, const std::vector<std::string>& libs,
                   const std::string& entry) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/engine-reference-XXXXXX";
  if (!mkdtemp(dir.data())) throw std::runtime_error("cannot make a directory for " + what + ": " + dir);
  struct Remove {
    std::string d;
    ~Remove() { files::remove_tree(d); }
  } remove{dir};
  std::ofstream(dir + "/reference.c") << source;
  std::vector<std::string> argv = {"gcc", "-O2", "-std=gnu11", "-fPIC", "-shared", "-fno-fast-math", "-o",
                                   dir + "/reference.so", dir + "/reference.c"};
  for (const auto& l : libs) argv.push_back("-l" + l);
  argv.push_back("-lm");
  ProcessResult r = run_process(argv);
  if (r.status != 0) throw std::runtime_error(what + " does not compile and link:\n" + r.output);
  void* h = dlopen((dir + "/reference.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw std::runtime_error("cannot load " + what + ": " + dlerror());
  if (!dlsym(h, entry.c_str())) throw std::runtime_error(what + " defines no '" + entry + "'");
  return h;
}

Yardstick load_yardstick(const YardstickSource& y, const std::string& entry, int threads, const std::string& task) {
  // Before the library loads: each reads its thread count from the environment.
  const std::string t = std::to_string(threads);
  for (const char* var : {"OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "OMP_NUM_THREADS"}) setenv(var, t.c_str(), 1);
  void* h = load_trusted("the yardstick " + y.name + " of task '" + task + "'", y.source, y.link, entry);
  using InitFn = void (*)(int);
  using VersionFn = const char* (*)();
  if (auto init = reinterpret_cast<InitFn>(dlsym(h, "yardstick_init"))) init(threads);
  auto version = reinterpret_cast<VersionFn>(dlsym(h, "yardstick_version"));
  return {dlsym(h, entry.c_str()), y.name, version ? version() : ""};
}

}  // namespace bench
