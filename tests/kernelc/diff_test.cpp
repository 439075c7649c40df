// Differential tests: every kernel of the shared examples and of our corpus is compiled
// by kernelc and by gcc (subprocess, -fopenmp) at O0, O1 and O3 with the same target
// flags, run on the same inputs, and the outputs compared (exactly, or to 1e-12
// relative where floating-point contraction or reduction order may differ).
//
// One test case per kernel file, registered when the program starts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "harness.hpp"
#include "kernelc/kernelc.hpp"

namespace {

namespace fs = std::filesystem;

void differential(const std::string& path) {
  std::string src = kharness::read_file(path);
  kharness::Header h = kharness::read_header(src);
  std::vector<std::string> march = kharness::host_march();
  for (const char* opt : {"O0", "O1", "O3"}) {
    INFO(path << " at -" << opt);
    kernelc::Options o;
    o.opt = opt;
    o.march = march;
    kernelc::Result r = kernelc::compile(src, o);
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
  void invoke() const override { FAIL("kernel directory " << dir << " is missing; configure with -DENGINE_SHARED_DIR=<path of shared/>"); }
};

// Registers "diff <label> <kernel>" for each kernel; a missing directory is a failure.
struct Register {
  std::vector<std::string> names;  // Catch keeps pointers into these
  Register() {
    names.reserve(1024);
    add_dir("shared", KERNELC_SHARED_KERNELS);
    add_dir("corpus", KERNELC_CORPUS);
  }
  void add_dir(const std::string& label, const std::string& dir) {
    if (!fs::is_directory(dir)) {
      names.push_back("diff " + label + " directory exists");
      Catch::AutoReg(new MissingDir(dir), CATCH_INTERNAL_LINEINFO, "", Catch::NameAndTags{names.back().c_str(), "[kernelc][diff]"});
      return;
    }
    for (const std::string& p : kharness::list_kernels(dir)) {
      names.push_back("diff " + label + " " + fs::path(p).stem().string());
      Catch::AutoReg(new KernelCase(p), CATCH_INTERNAL_LINEINFO, "", Catch::NameAndTags{names.back().c_str(), "[kernelc][diff]"});
    }
  }
};

Register registered;

}  // namespace
