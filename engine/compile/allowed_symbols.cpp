// The allowed libraries: the one list of what a kernel may call outside itself. Every back
// end checks against it (gcc on the object's undefined symbols, kernelc on the calls in
// the syntax tree), the evaluation checks every back end's references against it again,
// and the scripts ask it through bench.symbol_allowed before compiling.
//
// This file depends on nothing but the standard library: the kernel-C front end's fuzz
// target compiles it without the rest of the evaluation.
#include <dlfcn.h>

#include <algorithm>
#include <unordered_set>

#include "compile/compiler.hpp"

namespace bench {

namespace {

// libm's C99 functions (and the GNU exp10 and sincos); each also with the f and l
// suffixes, and as __NAME_finite, what glibc's older -ffast-math headers call.
const char* const kMath[] = {
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
    "cos", "cosh", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fdim", "floor",
    "fma", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint",
    "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan",
    "nearbyint", "nextafter", "nexttoward", "pow", "remainder", "remquo", "rint", "round",
    "scalbln", "scalbn", "sin", "sincos", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc"};

std::vector<AllowedLibrary> make_libraries() {
  AllowedLibrary libm{"libm", {}, {"_ZGV"}, true};  // _ZGV*: libmvec's vector variants
  for (const char* f : kMath) {
    std::string n = f;
    for (const std::string& v : {n, n + "f", n + "l", "__" + n + "_finite", "__" + n + "f_finite"})
      libm.symbols.push_back(v);
  }
  return {
      libm,
      {"", {"malloc", "calloc", "realloc", "reallocarray", "aligned_alloc", "posix_memalign",
            "memalign", "free"}, {}, true},
      {"", {"memset", "memcpy", "memmove"}, {}, true},
      // Integer absolute values: gcc folds them, a front end may call libc's.
      {"", {"abs", "labs", "llabs"}, {}, true},
      {"the OpenMP runtime", {}, {"omp_", "GOMP_"}, true},
      // What the compiler itself emits: the fortified memory functions, stack
      // protection, thread-local storage (OpenMP threadprivate). Never written by hand.
      {"", {"__memset_chk", "__memcpy_chk", "__memmove_chk", "__stack_chk_fail", "__tls_get_addr"},
       {}, false},
  };
}

const std::unordered_set<std::string>& allowed_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s;
    for (const auto& lib : allowed_libraries()) s.insert(lib.symbols.begin(), lib.symbols.end());
    return s;
  }();
  return names;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

const std::vector<AllowedLibrary>& allowed_libraries() {
  static const std::vector<AllowedLibrary> libs = make_libraries();
  return libs;
}

const std::vector<YardstickLibrary>& yardstick_libraries() {
  static const std::vector<YardstickLibrary> libs = {
      {"OpenBLAS", {"openblas"}, {"cblas_", "openblas_", "goto_", "LAPACK_", "LAPACKE_"}, true},
      {"BLIS", {"blis"}, {"bli_", "cblas_"}, true},
      {"LAPACKE", {"lapacke"}, {"LAPACKE_", "LAPACK_"}, true},
      {"FFTW", {"fftw3", "fftw3_threads", "fftw3_omp", "fftw3f", "fftw3l"},
       {"fftw_", "fftwf_", "fftwl_", "fftwq_", "dfftw_", "sfftw_"}, false},
      {"libxsmm", {"xsmm", "xsmmext"}, {"libxsmm_"}, false},
      {"Intel MKL", {"mkl_rt"}, {"mkl_", "MKL_", "Dfti"}, true},
  };
  return libs;
}

namespace {

// A Fortran BLAS or LAPACK name as the libraries export it: a type letter, a routine, an
// underscore (dgemm_, ddot_, idamax_, dpotrf_, ...).
bool fortran_blas_name(const std::string& name) {
  static const std::unordered_set<std::string> routines = {
      // BLAS 1, 2, 3
      "asum", "axpy", "copy", "dot", "dotu", "dotc", "nrm2", "rot", "rotg", "rotm", "rotmg", "scal", "swap",
      "amax", "amin", "gemv", "gbmv", "symv", "sbmv", "spmv", "trmv", "tbmv", "tpmv", "trsv", "tbsv", "tpsv",
      "ger", "geru", "gerc", "syr", "syr2", "spr", "spr2", "hemv", "hbmv", "hpmv", "her", "her2", "hpr", "hpr2",
      "gemm", "gemmt", "symm", "hemm", "syrk", "syr2k", "herk", "her2k", "trmm", "trsm", "omatcopy", "imatcopy",
      "axpby", "gemm3m",
      // LAPACK: factorisations, solves, inverses and their unblocked kernels
      "potrf", "potrf2", "potf2", "potrs", "potri", "posv", "getrf", "getrf2", "getf2", "getrs", "getri", "gesv",
      "trtri", "trtrs", "lauum", "laswp", "geqrf", "gelqf", "orgqr", "ormqr", "gesvd", "gesdd", "syev", "syevd",
      "gels", "pstrf", "sytrf", "sytrs", "gbtrf", "gttrf", "pbtrf", "pttrf", "lacpy", "lange", "laset"};
  if (name.size() < 3 || name.back() != '_') return false;
  std::string stem = name.substr(0, name.size() - 1);
  if (stem[0] == 'i' && stem.size() > 2) stem = stem.substr(1);  // idamax_, isamin_
  if (stem.size() > 2 && (stem.compare(0, 2, "sc") == 0 || stem.compare(0, 2, "dz") == 0))
    stem = stem.substr(1);  // scasum_, dznrm2_
  if (std::string("sdcz").find(stem[0]) == std::string::npos) return false;
  return routines.count(stem.substr(1)) > 0;
}

}  // namespace

bool provided_by_a_library(const std::string& name) {
  for (const auto& lib : yardstick_libraries()) {
    for (const auto& p : lib.prefixes)
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) return true;
    if (lib.fortran && fortran_blas_name(name)) return true;
  }
  // Fortran BLAS names of any other routine of the kind: dgemm_batch_, ...
  if (name.size() > 1 && name.back() == '_' && name.find("gemm") != std::string::npos) return true;
  return dlsym(RTLD_DEFAULT, name.c_str()) != nullptr;
}

bool symbol_allowed(const std::string& name) {
  if (name.empty()) return false;
  for (const auto& lib : allowed_libraries())
    for (const auto& p : lib.prefixes)
      if (name.size() > p.size() && name.compare(0, p.size(), p) == 0) return true;
  return allowed_names().count(name) > 0;
}

const std::string& allowed_libraries_text() {
  static const std::string text = [] {
    std::vector<std::string> parts;
    for (const auto& lib : allowed_libraries()) {
      if (!lib.shown) continue;
      // A library of a few names is its names; a named one is its name, and the
      // prefixes that make it when it has no names of its own.
      std::vector<std::string> prefixes;
      for (const auto& p : lib.prefixes) prefixes.push_back(p + "*");
      if (lib.name.empty()) parts.push_back(join(lib.symbols, "/"));
      else if (!lib.symbols.empty() || prefixes.empty()) parts.push_back(lib.name);
      else parts.push_back(lib.name + " (" + join(prefixes, ", ") + ")");
    }
    return join(parts, ", ");
  }();
  return text;
}

std::string library_violation_message(const std::string& name) {
  return "call to '" + name + "', which is outside the allowed libraries: " + allowed_libraries_text();
}

const std::vector<std::string>& allowed_constructors() {
  static const std::vector<std::string> names = {"__cpu_indicator_init"};
  return names;
}

bool constructor_allowed(const std::string& name) {
  const auto& names = allowed_constructors();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace bench
