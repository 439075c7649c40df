#include "cuda/launch.hpp"

#include <stdexcept>

namespace cuda {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

unsigned positive(const json& v, const std::string& what, unsigned most) {
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > most)
    bad(what + " must be an integer from 1 to " + std::to_string(most));
  return v.get<unsigned>();
}

void dims(const json& j, const char* key, unsigned out[3], unsigned most) {
  if (!j.contains(key)) bad(std::string("the launch needs ") + key + " = {x[, y, z]}");
  const json& v = j.at(key);
  if (!v.is_array() || v.empty() || v.size() > 3) bad(std::string(key) + " must be a list of 1 to 3 integers");
  for (size_t i = 0; i < v.size(); ++i) out[i] = positive(v[i], std::string(key) + "[" + std::to_string(i + 1) + "]", most);
}

LaunchArg arg(const json& a, size_t i) {
  const std::string where = "args[" + std::to_string(i + 1) + "]";
  if (!a.is_object() || a.size() == 0) bad(where + " must be {input = \"f32\", count = n}, {output = ...}, {int = n} or {float = x}");
  LaunchArg out{};
  for (const char* buffer : {"input", "output"}) {
    if (!a.contains(buffer)) continue;
    if (a.at(buffer) != "f32" && a.at(buffer) != "bf16") bad(where + ": a buffer holds \"f32\" or \"bf16\"");
    if (!a.contains("count") || a.size() != 2) bad(where + ": a buffer is {" + buffer + " = \"f32\", count = n}");
    out.kind = std::string(buffer) == "input" ? LaunchArg::input : LaunchArg::output;
    out.bf16 = a.at(buffer) == "bf16";
    out.count = positive(a.at("count"), where + ".count", 1u << 30);
    return out;
  }
  if (a.size() != 1) bad(where + ": a scalar is {int = n} or {float = x}");
  if (a.contains("int")) {
    if (!a.at("int").is_number_integer()) bad(where + ".int must be an integer");
    long long v = a.at("int").get<long long>();
    if (v < INT32_MIN || v > INT32_MAX) bad(where + ".int does not fit 32 bits");
    out.kind = LaunchArg::int32;
    out.value = static_cast<double>(v);
    return out;
  }
  if (a.contains("float")) {
    if (!a.at("float").is_number()) bad(where + ".float must be a number");
    out.kind = LaunchArg::float32;
    out.value = a.at("float").get<double>();
    return out;
  }
  bad(where + ": unknown argument kind " + a.begin().key());
}

}  // namespace

Launch parse_launch(const json& j) {
  if (!j.is_object()) bad("the launch must be a table");
  static const char* known[] = {"entry", "grid", "block", "shared_bytes", "args", "warmup", "calls", "seed"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) bad("unknown launch field '" + it.key() + "'");
  }
  Launch l;
  if (!j.contains("entry") || !j.at("entry").is_string() || j.at("entry").get<std::string>().empty())
    bad("the launch needs entry = \"the kernel's name\"");
  l.entry = j.at("entry");
  dims(j, "grid", l.grid, 0x7FFFFFFF);
  dims(j, "block", l.block, 1024);
  if (static_cast<unsigned long>(l.block[0]) * l.block[1] * l.block[2] > 1024)
    bad("a block holds at most 1024 threads");
  if (j.contains("shared_bytes")) {
    const json& s = j.at("shared_bytes");
    if (!s.is_number_integer() || s.get<long long>() < 0 || s.get<long long>() > (228 << 10))
      bad("shared_bytes must be an integer from 0 to 233472");
    l.shared_bytes = s.get<unsigned>();
  }
  if (!j.contains("args") || !j.at("args").is_array()) bad("the launch needs args = {...}, a list");
  size_t bytes = 0, outputs = 0;
  for (size_t i = 0; i < j.at("args").size(); ++i) {
    l.args.push_back(arg(j.at("args")[i], i));
    bytes += l.args.back().bytes();
    if (l.args.back().kind == LaunchArg::output) outputs += l.args.back().count;
  }
  if (outputs == 0) bad("the launch has no output buffer: nothing could be verified");
  if (bytes > (size_t{4} << 30)) bad("the launch's buffers exceed 4 GiB");
  if (outputs > (size_t{1} << 24)) bad("the outputs exceed 16 Mi elements, more than a reply carries");
  if (j.contains("warmup")) {
    const json& w = j.at("warmup");
    if (!w.is_number_integer() || w.get<long long>() < 0 || w.get<long long>() > 100)
      bad("warmup must be an integer from 0 to 100");
    l.warmup = w.get<int>();
  }
  if (j.contains("calls")) l.calls = static_cast<int>(positive(j.at("calls"), "calls", 1000));
  if (j.contains("seed")) {
    if (!j.at("seed").is_number_integer()) bad("seed must be an integer");
    l.seed = static_cast<uint64_t>(j.at("seed").get<long long>());
    l.seeded = true;
  }
  return l;
}

}  // namespace cuda
