// kernelc: a front end for the C that CPU kernels are written in, compiling in memory
// through libgccjit (preprocessor, parser and type checker, OpenMP lowered onto libgomp,
// x86 double-precision intrinsics lowered to generic vectors).
//
//   kernelc::Options o; o.opt = "O3"; o.march = {"-march=skylake-avx512"};
//   kernelc::Result r = kernelc::compile(source, o);
//   if (r.status == kernelc::Status::ok) ((void (*)(double*, ...))r.entry)(...);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"

namespace kernelc {

// The statuses are the evaluation's (bench::CompileStatus, named by bench::to_string):
// this front end is its "gccjit" back end and reports in its vocabulary.
using Status = bench::CompileStatus;

struct Options {
  std::string opt = "O3";             // O0 O1 O2 O3 Os
  std::vector<std::string> march;     // explicit target flags; "-march=native" is refused
  bool openmp = true;                 // link libgomp
  std::string entry = "matmul_optimized";
  std::string file = "kernel.c";      // the name diagnostics use
  std::string remarks_file;           // where gcc writes its loop remarks; "": none asked
};

struct Result {
  Status status = Status::compile_error;
  std::string diagnostics;            // "kernel.c:12:5: error: ..." lines
  void* entry = nullptr;
  double compile_ms = 0;              // front end + libgccjit, whole call
  double frontend_ms = 0;             // preprocess + parse + check + IR building
  std::vector<std::string> external_symbols;
  std::shared_ptr<void> code;         // the loaded code; entry is valid while held
  nlohmann::json features;            // compile: the techniques of the tree it parsed (as
                                      // features() gives them), null when not reached
  std::string remarks;                // compile with remarks_file: bench::read_remarks of it
};

// Compiles `source` and returns the entry function. Never throws for bad source.
Result compile(const std::string& source, const Options& opts);

// Parses and checks only: the diagnostics a compile would give, without code.
Result check(const std::string& source, const Options& opts);

// The techniques a kernel uses, read from its syntax tree (comments and strings cannot
// fool it): simd (intrinsic families, vector width in doubles), openmp constructs and
// clauses, prefetch, cache blocking (tiled loops), register blocking (independent
// accumulators, unrolled bodies), loop orders of the loop nests. A source that does not
// parse gives {"error": "..."} with its diagnostic. compile() reports the same of the
// tree it compiles, so an evaluation reads its kernel once.
nlohmann::json features(const std::string& source);

// Macros the target flags imply (__AVX512F__, __FMA__, ...), as the driver would define.
std::vector<std::pair<std::string, std::string>> target_macros(const std::vector<std::string>& march);

}  // namespace kernelc
