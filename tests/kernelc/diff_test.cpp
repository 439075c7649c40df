// Differential tests: every labelled example kernel (tests/data/kernels) and of our corpus is compiled
// by kernelc and by gcc (subprocess, -fopenmp) at O0, O1 and O3 with the same target
// flags, run on the same inputs, and the outputs compared (exactly, or to 1e-12
// relative where floating-point contraction or reduction order may differ).
//
// The target is this machine's (kharness::host_march), or the one ENGINE_TARGET forces.
// A kernel written with AVX-512 intrinsics (and no __AVX512F__ fallback) only compiles
// where the target has AVX-512: elsewhere both compilers must refuse it, kernelc with
// gcc's diagnostic naming the intrinsic and the extension the target lacks.
//
// One test case per kernel file, registered when the program starts.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "harness.hpp"
#include "kernelc/kernelc.hpp"

namespace {

namespace fs = std::filesystem;

// Written for AVX-512 only: its intrinsics or types, without an #ifdef __AVX512F__.
bool needs_avx512(const std::string& src) {
  return std::regex_search(src, std::regex("_mm512_|__m512")) && src.find("__AVX512F__") == std::string::npos;
}

bool target_has_avx512(const std::vector<std::string>& march) {
  for (auto& [k, v] : kernelc::target_macros(march))
    if (k == "__AVX512F__") return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "(no target flags)" : out;
}


// The comparisons are of results, not speed: two OpenMP threads, not one a core. A kernel
// that opens a parallel region for every output (k07_reduction_dot: 4,096 at 64^3) took
// over 300 s beside other tests on a 16-core machine, 0.7 s alone. The kernels bring
// libgomp in when they are loaded, so its setter is looked up then.
static void cap_openmp_threads() {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) set(2);
}

void differential(const std::string& path) {
  std::string src = kharness::read_file(path);
  kharness::Header h = kharness::read_header(src);
  std::vector<std::string> march = kharness::host_march();
  bool refused = h.expect == "ok" && needs_avx512(src) && !target_has_avx512(march);
  for (const char* opt : {"O0", "O1", "O3"}) {
    INFO(path << " at -" << opt << ", target " << joined(march));
    kernelc::Options o;
    o.opt = opt;
    o.march = march;
    kernelc::Result r = kernelc::compile(src, o);
    if (refused) {
      // an AVX-512 kernel on a target without it: a compile error at the first intrinsic
      INFO(r.diagnostics);
      CHECK(r.status == kernelc::Status::compile_error);
      CHECK(std::regex_search(r.diagnostics, std::regex("^kernel\\.c:[0-9]+:[0-9]+: error: inlining failed in call to "
                                                         "'always_inline' '_mm512_[a-z0-9_]+': target specific option "
                                                         "mismatch \\(the target flags do not enable AVX512F\\)")));
      kharness::GccBuild g = kharness::gcc_compile(src, opt, march);
      INFO(g.diagnostics);
      CHECK_FALSE(g.ok);
      // (gcc quotes as the locale says: 'x' or a pair of typographic quotes)
      CHECK(std::regex_search(g.diagnostics, std::regex("inlining failed in call to \\S+always_inline\\S+ "
                                                        "\\S+_mm512_[a-z0-9_]+\\S+ target specific option mismatch")));
      continue;
    }
    if (h.expect == "compile_error") {
      CHECK(r.status == kernelc::Status::compile_error);
      CHECK(std::regex_search(r.diagnostics, std::regex("^kernel\\.c:[0-9]+:[0-9]+: error: ")));
      return;
    }
    if (h.expect == "library_violation") {
      CHECK(r.status == kernelc::Status::library_violation);
      CHECK(std::regex_search(r.diagnostics, std::regex("^kernel\\.c:[0-9]+:[0-9]+: error: call to '[A-Za-z_0-9]+'")));
      return;
    }
    INFO(r.diagnostics);
    REQUIRE(r.status == kernelc::Status::ok);
    REQUIRE(r.entry != nullptr);
    if (h.expect == "timeout" || h.expect == "runtime_error") continue;  // compiles; the sandbox's business
    kharness::GccBuild g = kharness::gcc_compile(src, opt, march);
    INFO(g.diagnostics);
    REQUIRE(g.ok);
    cap_openmp_threads();
    unsigned seed = 1;
    for (kharness::Shape s : h.sizes) {
      INFO("M=" << s.M << " N=" << s.N << " K=" << s.K);
      std::vector<double> ours = kharness::run(reinterpret_cast<kharness::Kernel>(r.entry), s, seed);
      std::vector<double> theirs = kharness::run(g.entry, s, seed);
      CHECK(kharness::compare(ours, theirs, 1e-12) == "");
      seed++;
    }
  }
}

struct KernelCase : Catch::ITestInvoker {
  std::string path;
  explicit KernelCase(std::string p) : path(std::move(p)) {}
  void invoke() const override { differential(path); }
};

struct MissingDir : Catch::ITestInvoker {
  std::string dir;
  explicit MissingDir(std::string d) : dir(std::move(d)) {}
  void invoke() const override { FAIL("kernel directory " << dir << " is missing from the repository"); }
};

// Registers "kernelc diff <label> <kernel>" for each kernel; a missing directory is a failure.
struct Register {
  std::vector<std::string> names;  // Catch keeps pointers into these
  Register() {
    names.reserve(1024);
    add_dir("labelled", KERNELC_LABELLED_KERNELS);
    add_dir("corpus", KERNELC_CORPUS);
  }
  void add_dir(const std::string& label, const std::string& dir) {
    if (!fs::is_directory(dir)) {
      names.push_back("kernelc diff " + label + " directory exists");
      Catch::AutoReg(new MissingDir(dir), CATCH_INTERNAL_LINEINFO, "", Catch::NameAndTags{names.back().c_str(), "[kernelc][diff]"});
      return;
    }
    for (const std::string& p : kharness::list_kernels(dir)) {
      names.push_back("kernelc diff " + label + " " + fs::path(p).stem().string());
      Catch::AutoReg(new KernelCase(p), CATCH_INTERNAL_LINEINFO, "", Catch::NameAndTags{names.back().c_str(), "[kernelc][diff]"});
    }
  }
};

Register registered;

}  // namespace

TEST_CASE("kernelc diff: the AVX-512 kernels are told apart from the portable ones", "[kernelc][diff]") {
  int avx512 = 0;
  for (const std::string& dir : {std::string(KERNELC_CORPUS), std::string(KERNELC_LABELLED_KERNELS)})
    for (const std::string& p : kharness::list_kernels(dir)) avx512 += needs_avx512(kharness::read_file(p));
  CHECK(avx512 >= 10);  // v01-v06, v14-v16, v18 and the labelled k04: the refusal is tested
  CHECK_FALSE(needs_avx512(kharness::read_file(std::string(KERNELC_CORPUS) + "/v19_intrinsics_ifdef.c")));
  CHECK(needs_avx512(kharness::read_file(std::string(KERNELC_CORPUS) + "/v01_avx512_tail_mask.c")));
  CHECK_FALSE(needs_avx512(kharness::read_file(std::string(KERNELC_CORPUS) + "/v07_avx2_4x8.c")));
  // the target the cases run for, and what it says of AVX-512
  std::vector<std::string> march = kharness::host_march();
  const char* forced = std::getenv("ENGINE_TARGET");
  if (forced && *forced && std::string(forced) != "native") {
    CHECK(march == std::vector<std::string>{std::string("-march=") + forced});
  }
  CHECK(target_has_avx512({"-march=x86-64-v4"}));
  CHECK_FALSE(target_has_avx512({"-march=x86-64-v3"}));
}
