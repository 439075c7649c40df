// The allowed libraries through both back ends: one rule (bench::symbol_allowed), the
// same verdict and the same words from gcc's object check and the front end's tree check.
#include <catch2/catch.hpp>

#include <string>
#include <utility>

#include "compile/compiler.hpp"
#include "bench/machine.hpp"
#include "support.hpp"

using namespace bench;

namespace {

const char* const kSig = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)";

CompiledKernel compile_with(const std::string& backend, const std::string& src) {
  Backend* b = find_backend(backend);
  REQUIRE(b != nullptr);
  CompileOptions o;
  o.march = resolve_march("native");
  return b->compile(src, o);
}

}  // namespace

TEST_CASE("a call outside the allowed libraries is a library violation through every back end") {
  // {declarations, the call}: the headers where both back ends have them, else the
  // kernel declares the function itself, as a header would.
  const std::pair<const char*, const char*> forbidden[] = {
      {"#include <stdio.h>\n", "printf(\"%f\\n\", C[0])"},
      {"#include <stdio.h>\n", "fprintf(stdout, \"%f\\n\", C[0])"},
      {"#include <stdio.h>\n", "fopen(\"/tmp/x\", \"w\")"},
      {"#include <stdlib.h>\nint system(const char *);\n", "system(\"true\")"},
      {"void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int,"
       " double, double *, int);\n",
       "cblas_dgemm(101, 111, 111, M, N, K, 1.0, A, K, B, N, 0.0, C, N)"},
      {"void *dlopen(const char *, int);\n", "dlopen(\"libc.so.6\", 2)"},
      {"long syscall(long, ...);\n", "syscall(39L)"},
      {"int pthread_create(void *, const void *, void *, void *);\n", "pthread_create(0, 0, 0, 0)"},
  };
#ifdef BENCH_TEST_KERNELC
  REQUIRE(bench_test::engine_backends() == std::vector<std::string>{"gcc", "gccjit"});
#endif
  for (const auto& [decls, call] : forbidden) {
    std::string name = std::string(call).substr(0, std::string(call).find('('));
    REQUIRE_FALSE(symbol_allowed(name));
    std::string src = std::string(decls) + kSig + " {\n  " + call + ";\n}\n";
    for (const auto& backend : bench_test::engine_backends()) {
      auto k = compile_with(backend, src);
      INFO(backend << ": " << name << ": " << k.diagnostics);
      CHECK(to_string(k.status) == std::string("library_violation"));
      CHECK(k.entry == nullptr);
      // The same words from every back end: "kernel.c[:LINE:COL]: error: call to 'NAME',
      // which is outside the allowed libraries: ...", the libraries from the list itself.
      CHECK_THAT(k.diagnostics, Catch::Contains("error: " + library_violation_message(name)));
      CHECK(k.diagnostics.rfind("kernel.c:", 0) == 0);
    }
  }
}

TEST_CASE("a call into each allowed library compiles through every back end") {
  const std::pair<const char*, const char*> allowed[] = {
      {"#include <math.h>\n", "C[0] = pow(A[0], 2.0) + lround(A[1])"},
      {"#include <math.h>\n", "C[0] = sqrtf((float)A[0]) + expf((float)A[1])"},
      {"#include <stdlib.h>\n", "C[0] = abs(M) + labs((long)N)"},
      {"#include <string.h>\n", "memcpy(C, A, sizeof(double))"},
      {"#include <stdlib.h>\n", "double *t = aligned_alloc(64, 64); t[0] = A[0]; C[0] = t[0]; free(t)"},
      {"#include <omp.h>\n", "C[0] = omp_get_thread_num()"},
  };
  for (const auto& [decls, body] : allowed) {
    std::string src = std::string(decls) + kSig + " {\n  " + body + ";\n}\n";
    for (const auto& backend : bench_test::engine_backends()) {
      auto k = compile_with(backend, src);
      INFO(backend << ": " << body << ": " << k.diagnostics);
      CHECK(to_string(k.status) == std::string("ok"));
      CHECK(k.entry != nullptr);
      for (const auto& s : k.external_symbols) {
        INFO(s);
        CHECK(symbol_allowed(s));
      }
    }
  }
}

TEST_CASE("an allowed function the front end does not declare is left to gcc") {
  // exp10 is libm's (gcc knows its type); called through an implicit declaration the
  // front end would get it wrong, so it says unsupported and the evaluation uses gcc.
  std::string src = std::string(kSig) + " {\n  C[0] = exp10(A[0]);\n}\n";
  for (const auto& backend : bench_test::engine_backends()) {
    auto k = compile_with(backend, src);
    INFO(backend << ": " << k.diagnostics);
    CHECK(to_string(k.status) == std::string(backend == "gcc" ? "ok" : "unsupported"));
  }
}
