#include "compile/compiler.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace bench {

const char* to_string(CompileStatus s) {
  switch (s) {
    case CompileStatus::ok: return "ok";
    case CompileStatus::compile_error: return "compile_error";
    case CompileStatus::library_violation: return "library_violation";
    case CompileStatus::unsupported: return "unsupported";
  }
  return "unknown";
}

// ---- optimisation levels ------------------------------------------------------

const std::vector<std::string>& optimisation_levels() {
  static const std::vector<std::string> levels = {"O0", "O1", "O2", "O3", "Os"};
  return levels;
}

bool optimisation_level_known(const std::string& opt) {
  const auto& l = optimisation_levels();
  return std::find(l.begin(), l.end(), opt) != l.end();
}

std::string optimisation_level_message(const std::string& opt) {
  std::string names;
  for (const auto& l : optimisation_levels()) names += (names.empty() ? "" : ", ") + l;
  return "opt must be one of " + names + ", got '" + opt + "'";
}

// ---- registry -----------------------------------------------------------------

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Backend>> list;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: back ends may be used at exit
  return *r;
}

Backend* find_locked(Registry& r, const std::string& name) {
  for (auto& b : r.list)
    if (name == b->name()) return b.get();
  return nullptr;
}

}  // namespace

std::unique_ptr<Backend> make_gcc_backend();  // gcc_backend.cpp

static void ensure_builtin(Registry& r) {
  if (!find_locked(r, "gcc")) r.list.insert(r.list.begin(), make_gcc_backend());
}

void register_backend(std::unique_ptr<Backend> backend) {
  if (!backend) throw std::invalid_argument("bench::register_backend: null back end");
  auto& r = registry();
  std::lock_guard lock(r.mu);
  ensure_builtin(r);
  if (find_locked(r, backend->name()))
    throw std::logic_error(std::string("bench::register_backend: a back end named '") +
                           backend->name() + "' already exists");
  r.list.push_back(std::move(backend));
}

Backend* find_backend(const std::string& name) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  ensure_builtin(r);
  return find_locked(r, name);
}

std::vector<std::string> backend_names() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  ensure_builtin(r);
  std::vector<std::string> names;
  for (auto& b : r.list) names.push_back(b->name());
  return names;
}

std::string default_backend() { return find_backend("gccjit") ? "gccjit" : "gcc"; }


}  // namespace bench
