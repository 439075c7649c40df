// A task as the evaluation process receives it: a Lua spec (stdlib/tasks/*.lua) resolved
// by the engine for one size (engine.tasks), every count and expression already a number.
// The evaluation trusts nothing in it without checking: spec_from_json names the field
// that is missing, mistyped or out of range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench {

// How a buffer's (or a drawn scalar's) values are made for each call, from the call's
// keystream. Every call draws afresh; only sizes and structure are known in advance.
struct Draw {
  std::string dist = "uniform";  // uniform | spd | dominant | lower | upper | csr_row_ptr | csr_col_idx
  double lo = -1, hi = 1;        // uniform: values in [lo, hi)
  int64_t n = 0;                 // spd, lower, upper: the matrix order (row-major n x n)
  int64_t rows = 0, cols = 0, per_row = 0;  // csr_*: rows * per_row entries, rows of varied lengths
};

enum class Role { in, out, inout };

// One parameter of the kernel's prototype, in order.
struct Param {
  std::string name;
  std::string type;   // int, long, double, double*, int*
  bool pointer() const { return type.back() == '*'; }
  bool integer() const { return type == "int" || type == "long" || type == "int*"; }
  // Scalars: a value fixed by the size, or drawn for every call (double only).
  int64_t int_value = 0;
  double double_value = 0;
  bool drawn = false;
  // Buffers (and drawn scalars): role, element count, how the values are drawn.
  Role role = Role::in;
  int64_t count = 0;
  Draw draw;
};

// The check: every output element within factor * u * scale of the reference, u = 2^-53.
// scale "inputs": the reference evaluated on the inputs' absolute values (for a multilinear
// computation, the sum of the magnitudes of the terms, as matmul's |A||B|); "output": the
// largest magnitude of the reference's buffer (norm-wise bounds: FFT, factorisations). A
// factor of 0 asks for exact results (copies, transpositions, integer work).
struct Bound {
  double factor = 0;
  std::string scale = "inputs";
};

// A library routine that computes the task, as C calling the library with the task's
// prototype; linked against `link` (-lNAME) in the reference child. It may define
// `const char *yardstick_version(void)` and `void yardstick_init(int threads)`.
struct YardstickSource {
  std::string name;  // the library's: "openblas", "blis", "fftw", ...
  std::vector<std::string> link;
  std::string source;
};

struct TaskSpec {
  std::string name, family, split;  // split: "train" or "heldout"
  std::string entry;                // the function the kernel defines
  std::string returns = "void";     // "void" or "double" (the value is one more output)
  std::vector<Param> params;
  std::string reference;            // C source defining `entry`: the project's reference
  std::vector<YardstickSource> yardsticks;
  double flops = 0, bytes = 0;      // per call
  Bound bound;
  nlohmann::json size;              // the size's variables, for describing and keys
};

// Limits of the call: the x86-64 System V registers (6 integer, 8 floating point) and up
// to 8 more arguments on the stack.
constexpr int kMaxStackArgs = 8;

TaskSpec spec_from_json(const nlohmann::json& spec, const nlohmann::json& size);
// A list of {name, link, source} (a spec's, or matmul's problem.yardsticks); `where` names
// it in errors.
std::vector<YardstickSource> yardsticks_from_json(const nlohmann::json& list, const std::string& where);

}  // namespace bench
