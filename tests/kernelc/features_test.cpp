// Technique features against the labels of the labelled kernels and hand-made cases.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "harness.hpp"
#include "kernelc/kernelc.hpp"

namespace {
std::set<std::string> words(const std::string& s) {
  std::set<std::string> out;
  std::stringstream ss(s);
  std::string w;
  while (ss >> w)
    if (w != "none") out.insert(w);
  return out;
}
std::set<std::string> techniques(const nlohmann::json& f) {
  std::set<std::string> out;
  for (auto& t : f["techniques"]) out.insert(t.get<std::string>());
  return out;
}
}  // namespace

TEST_CASE("kernelc features match the labelled kernels' labels", "[kernelc][features]") {
  int labelled = 0;
  for (const std::string& p : kharness::list_kernels(KERNELC_LABELLED_KERNELS)) {
    std::string src = kharness::read_file(p);
    kharness::Header h = kharness::read_header(src);
    if (h.expect != "ok") continue;
    INFO(p);
    nlohmann::json f = kernelc::features(src);
    REQUIRE_FALSE(f.contains("error"));
    CHECK(techniques(f) == words(h.techniques));
    labelled++;
  }
  CHECK(labelled >= 7);
}

TEST_CASE("kernelc features are not fooled by comments or strings", "[kernelc][features]") {
  nlohmann::json f = kernelc::features(
      "/* _mm512_fmadd_pd #pragma omp parallel for */\n"
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  // #pragma omp parallel\n"
      "  const char *s = \"_mm_prefetch(x, _MM_HINT_T0)\";\n"
      "  for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) { double t = 0; for (int k = 0; k < K; k++) t += A[i*K+k] * B[k*N+j]; C[i*N+j] = t; }\n"
      "}\n");
  CHECK(f["techniques"].empty());
  CHECK(f["loop_orders"] == nlohmann::json::array({"i,j,k"}));
}

TEST_CASE("kernelc features detail", "[kernelc][features]") {
  nlohmann::json f = kernelc::features(
      "#include <immintrin.h>\n"
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "#pragma omp parallel for schedule(dynamic, 4) collapse(2) reduction(max: M)\n"
      "  for (int ii = 0; ii < M; ii += 32) for (int jj = 0; jj < N; jj += 32)\n"
      "    for (int i = ii; i < ii + 32; i++) for (int j = jj; j < jj + 32; j += 8) {\n"
      "      __m512d a = _mm512_loadu_pd(&C[i*N+j]), b = _mm512_setzero_pd();\n"
      "      for (int k = 0; k < K; k++) { a = _mm512_fmadd_pd(_mm512_set1_pd(A[i*K+k]), _mm512_loadu_pd(&B[k*N+j]), a); b = _mm512_add_pd(b, a); }\n"
      "      _mm512_storeu_pd(&C[i*N+j], _mm512_add_pd(a, b));\n"
      "    }\n"
      "}\n");
  REQUIRE_FALSE(f.contains("error"));
  CHECK(f["simd"]["width"] == 8);
  CHECK(f["simd"]["families"] == nlohmann::json::array({"avx512"}));
  CHECK(f["openmp"]["schedules"] == nlohmann::json::array({"dynamic"}));
  CHECK(f["openmp"]["collapse"] == 2);
  CHECK(f["openmp"]["reductions"] == nlohmann::json::array({"max"}));
  CHECK(f["cache_blocking"]["loops"].size() == 2);
  CHECK(f["register_blocking"]["accumulators"] == 2);
  CHECK(f["loop_orders"] == nlohmann::json::array({"ii,jj,i,j,k"}));
  nlohmann::json bad = kernelc::features("void f( {");
  CHECK(bad["error"].get<std::string>().find("kernel.c:1:") == 0);
}

// The evaluation reads a kernel once: the compile reports the techniques of the tree it
// compiled, the same as a read of the source alone, also when a later check refuses it.
TEST_CASE("a compile reports the features of the tree it compiled", "[kernelc][features]") {
  kernelc::Options o;
  o.march = {"-mavx512f", "-mavx2", "-mfma"};
  int compared = 0;
  for (const std::string& p : kharness::list_kernels(KERNELC_LABELLED_KERNELS)) {
    std::string src = kharness::read_file(p);
    INFO(p);
    kernelc::Result r = kernelc::compile(src, o);
    CHECK(r.features == kernelc::features(src));
    compared++;
  }
  CHECK(compared >= 10);
  // Parsed, then refused by the allow-list: the features are still the tree's.
  kernelc::Result lib = kernelc::compile(
      "#include <stdio.h>\n#include <omp.h>\nvoid matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "#pragma omp parallel for\n  for (int i = 0; i < M; i++) puts(\"x\");\n}\n", o);
  CHECK(lib.status == kernelc::Status::library_violation);
  CHECK(techniques(lib.features) == std::set<std::string>{"omp"});
  kernelc::Result broken = kernelc::compile("void f( {", o);
  CHECK(broken.status == kernelc::Status::compile_error);
  CHECK(broken.features["error"].get<std::string>().find("kernel.c:1:") == 0);
}
