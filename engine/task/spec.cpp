// Reading a resolved spec: every field checked, the first bad one named.
#include "task/spec.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

namespace bench {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument("problem.spec." + where + ": " + what);
}

const json& field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) bad(where.empty() ? key : where + "." + key, "missing");
  return j.at(key);
}

std::string text(const json& j, const char* key, const std::string& where) {
  const json& v = field(j, key, where);
  if (!v.is_string()) bad(where.empty() ? key : where + "." + key, "must be a string");
  return v.get<std::string>();
}

double number(const json& j, const char* key, const std::string& where, double lo, double hi) {
  const json& v = field(j, key, where);
  const std::string at = where.empty() ? key : where + "." + key;
  if (!v.is_number()) bad(at, "must be a number");
  double x = v.get<double>();
  if (!(x >= lo && x <= hi)) bad(at, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return x;
}

int64_t integer(const json& j, const char* key, const std::string& where, int64_t lo, int64_t hi) {
  const json& v = field(j, key, where);
  const std::string at = where.empty() ? key : where + "." + key;
  if (!v.is_number_integer()) bad(at, "must be an integer");
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) bad(at, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                    ", got " + std::to_string(x));
  return x;
}

constexpr int64_t kMaxCount = int64_t(1) << 31;  // elements in one buffer

Draw read_draw(const json& j, const std::string& where, const Param& p) {
  Draw d;
  if (!j.is_object()) bad(where, "must be a table");
  d.dist = text(j, "dist", where);
  static const std::set<std::string> known = {"uniform", "spd", "dominant", "lower", "upper", "csr_row_ptr", "csr_col_idx"};
  if (!known.count(d.dist))
    bad(where + ".dist", "unknown distribution '" + d.dist +
                             "' (known: uniform, spd, dominant, lower, upper, csr_row_ptr, csr_col_idx)");
  const bool ints = d.dist == "csr_row_ptr" || d.dist == "csr_col_idx";
  if (ints != (p.type == "int*"))
    bad(where + ".dist", "'" + d.dist + "' draws " + (ints ? "int" : "double") + " values, the parameter is " +
                             p.type);
  if (d.dist == "uniform") {
    d.lo = j.contains("lo") ? number(j, "lo", where, -1e300, 1e300) : -1;
    d.hi = j.contains("hi") ? number(j, "hi", where, -1e300, 1e300) : 1;
    if (!(d.lo < d.hi)) bad(where, "lo must be below hi");
  } else if (d.dist == "spd" || d.dist == "dominant" || d.dist == "lower" || d.dist == "upper") {
    d.n = integer(j, "n", where, 1, 1 << 16);
    if (p.count != d.n * d.n) bad(where + ".n", "an n x n matrix needs count = n * n");
  } else {
    d.rows = integer(j, "rows", where, 1, kMaxCount);
    d.per_row = integer(j, "per_row", where, 0, kMaxCount);
    d.cols = integer(j, "cols", where, 1, kMaxCount);  // the row lengths depend on it
    if (d.per_row > d.cols) bad(where + ".per_row", "more entries per row (on average) than columns");
    if (d.dist == "csr_row_ptr") {
      if (p.count != d.rows + 1) bad(where, "a row pointer of `rows` rows has rows + 1 entries");
      if (d.rows * d.per_row > INT32_MAX) bad(where, "rows * per_row entries overflow an int row pointer");
    } else {
      if (p.count != d.rows * d.per_row) bad(where, "the column indices need rows * per_row entries");
    }
  }
  return d;
}

Param read_param(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, "must be a table");
  Param p;
  p.name = text(j, "name", where);
  p.type = text(j, "type", where);
  static const std::set<std::string> types = {"int", "long", "double", "double*", "int*"};
  if (!types.count(p.type)) bad(where + ".type", "unknown type '" + p.type + "' (int, long, double, double*, int*)");
  if (p.pointer()) {
    const std::string role = text(j, "role", where);
    if (role == "in") p.role = Role::in;
    else if (role == "out") p.role = Role::out;
    else if (role == "inout") p.role = Role::inout;
    else bad(where + ".role", "must be in, out or inout, got '" + role + "'");
    if (p.type == "int*" && p.role != Role::in) bad(where + ".role", "integer buffers are inputs");
    p.count = integer(j, "count", where, 1, kMaxCount);
    if (p.role != Role::out) p.draw = read_draw(field(j, "draw", where), where + ".draw", p);
  } else if (j.contains("draw")) {
    if (p.type != "double") bad(where + ".draw", "only double scalars are drawn");
    p.drawn = true;
    p.count = 1;
    p.draw = read_draw(j.at("draw"), where + ".draw", p);
    if (p.draw.dist != "uniform") bad(where + ".draw.dist", "a scalar is drawn uniformly");
  } else if (p.type == "double") {
    p.double_value = number(j, "value", where, -1e300, 1e300);
  } else {
    p.int_value = integer(j, "value", where, p.type == "int" ? INT32_MIN : INT64_MIN,
                          p.type == "int" ? INT32_MAX : INT64_MAX);
  }
  return p;
}

}  // namespace

std::vector<YardstickSource> yardsticks_from_json(const json& ys, const std::string& where) {
  auto fail = [&](const std::string& at, const std::string& what) { throw std::invalid_argument(at + ": " + what); };
  if (!ys.is_array()) fail(where, "must be a list");
  std::vector<YardstickSource> out;
  for (size_t i = 0; i < ys.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i + 1) + "]";
    const json& y = ys[i];
    if (!y.is_object()) fail(at, "must be a table");
    YardstickSource s;
    for (const char* key : {"name", "source"})
      if (!y.contains(key) || !y.at(key).is_string()) fail(at + "." + key, "missing (a string)");
    s.name = y.at("name").get<std::string>();
    if (s.name == "reference") fail(at + ".name", "\"reference\" is the spec's own C");
    s.source = y.at("source").get<std::string>();
    if (!y.contains("link") || !y.at("link").is_array()) fail(at + ".link", "must be a list of library names");
    for (const auto& l : y.at("link")) {
      if (!l.is_string() || l.get<std::string>().empty() ||
          l.get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
        fail(at + ".link", "library names are lower-case letters, digits and _");
      s.link.push_back(l.get<std::string>());
    }
    out.push_back(std::move(s));
  }
  return out;
}

TaskSpec spec_from_json(const json& j, const json& size) {
  if (!j.is_object()) throw std::invalid_argument("problem.spec must be a table");
  TaskSpec s;
  s.name = text(j, "name", "");
  s.family = text(j, "family", "");
  s.split = text(j, "split", "");
  if (s.split != "train" && s.split != "heldout") bad("split", "must be \"train\" or \"heldout\"");
  s.entry = text(j, "entry", "");
  s.returns = j.contains("returns") ? text(j, "returns", "") : "void";
  if (s.returns != "void" && s.returns != "double") bad("returns", "must be \"void\" or \"double\"");
  s.reference = text(j, "reference", "");
  s.flops = number(j, "flops", "", 0, 1e18);
  s.bytes = number(j, "bytes", "", 0, 1e18);
  const json& b = field(j, "bound", "");
  if (!b.is_object()) bad("bound", "must be a table");
  s.bound.factor = number(b, "factor", "bound", 0, 1e15);
  s.bound.scale = b.contains("scale") ? text(b, "scale", "bound") : "inputs";
  if (s.bound.scale != "inputs" && s.bound.scale != "output") bad("bound.scale", "must be \"inputs\" or \"output\"");
  const json& ps = field(j, "params", "");
  if (!ps.is_array()) bad("params", "must be a list");
  int ints = 0, doubles = 0, stack = 0, outputs = s.returns == "double";
  std::set<std::string> names;
  for (size_t i = 0; i < ps.size(); ++i) {
    Param p = read_param(ps[i], "params[" + std::to_string(i + 1) + "]");
    if (!names.insert(p.name).second) bad("params[" + std::to_string(i + 1) + "].name", "'" + p.name + "' twice");
    int& regs = p.type == "double" ? doubles : ints;
    if (regs < (p.type == "double" ? 8 : 6)) ++regs;
    else ++stack;
    if (p.pointer() && p.role != Role::in) ++outputs;
    s.params.push_back(std::move(p));
  }
  if (stack > kMaxStackArgs)
    bad("params", "too many parameters: 6 integer or pointer and 8 double ones travel in registers, and at "
                  "most " + std::to_string(kMaxStackArgs) + " more");
  if (outputs == 0) bad("params", "no output: a buffer with role out or inout, or returns = \"double\"");
  if (j.contains("yardsticks")) s.yardsticks = yardsticks_from_json(j.at("yardsticks"), "problem.spec.yardsticks");
  s.size = size;
  return s;
}

}  // namespace bench
