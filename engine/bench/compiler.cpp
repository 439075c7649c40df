#include "bench/compiler.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

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

namespace {

// libm's C99 functions; each also comes with the f and l suffixes.
const char* const kMath[] = {
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
    "cos", "cosh", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fdim", "floor",
    "fma", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint",
    "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan",
    "nearbyint", "nextafter", "nexttoward", "pow", "remainder", "remquo", "rint", "round",
    "scalbln", "scalbn", "sin", "sincos", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc"};

// Memory allocation and the three memory functions (with their fortified forms).
const char* const kMemory[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
    "memalign", "memset", "memcpy", "memmove", "__memset_chk", "__memcpy_chk",
    "__memmove_chk",
    // emitted by the compiler itself: stack protection, thread-local storage (OpenMP
    // threadprivate)
    "__stack_chk_fail", "__tls_get_addr"};

const std::unordered_set<std::string>& allowed_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s;
    for (const char* f : kMath) {
      std::string n = f;
      s.insert(n);
      s.insert(n + "f");
      s.insert(n + "l");
      s.insert("__" + n + "_finite");  // what older -ffast-math code calls
      s.insert("__" + n + "f_finite");
    }
    for (const char* f : kMemory) s.insert(f);
    return s;
  }();
  return names;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

bool symbol_allowed(const std::string& name) {
  if (name.empty()) return false;
  // The OpenMP runtime (libgomp's entry points and the omp_* API).
  if (starts_with(name, "GOMP_") || starts_with(name, "omp_")) return true;
  // libmvec's vector variants of libm functions (OpenMP simd and -ffast-math loops).
  if (starts_with(name, "_ZGV")) return true;
  return allowed_names().count(name) > 0;
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

std::unique_ptr<Backend> make_gcc_backend();  // gcc.cpp

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
