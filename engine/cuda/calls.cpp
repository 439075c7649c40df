#include "cuda/calls.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cuda/cuda.hpp"

namespace cuda {

namespace {

// The stream the checked positions are drawn from: a buffer index no argument has.
constexpr uint32_t kPositionsStream = 0xFFFFFFFFu;

// `v` rounded to the nearest bfloat16 (ties to even; v is finite): its bits, and its value.
float to_bf16(float v, uint16_t& bits) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  bits = static_cast<uint16_t>(u >> 16);
  u = uint32_t{bits} << 16;
  float r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

int total_calls(const Launch& l) { return l.warmup + l.calls; }

}  // namespace

std::vector<float> draw_input(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg,
                              std::vector<uint16_t>* bits) {
  std::vector<double> unit(a.count);
  keys.fill_signed_unit(static_cast<uint32_t>(call), static_cast<uint32_t>(arg), unit.data(), a.count);
  std::vector<float> values(a.count);
  // 24 bits a value, below 1: each is a float exactly, in [-1, 1)
  for (size_t i = 0; i < a.count; ++i) values[i] = static_cast<float>(std::floor(unit[i] * 8388608.0) / 8388608.0);
  if (a.bf16) {
    uint16_t b = 0;
    if (bits) bits->resize(a.count);
    for (size_t i = 0; i < a.count; ++i) {
      values[i] = to_bf16(values[i], b);
      if (bits) (*bits)[i] = b;
    }
  }
  return values;
}

size_t output_values(const Launch& l) {
  size_t n = 0;
  for (const auto& a : l.args)
    if (a.kind == LaunchArg::output) n += a.count;
  return n;
}

size_t output_bytes(const Launch& l) {
  size_t n = 0;
  for (const auto& a : l.args)
    if (a.kind == LaunchArg::output) n += a.bytes();
  return n;
}

size_t checked_per_call(const Launch& l) {
  const size_t each = output_values(l);
  const size_t earlier = static_cast<size_t>(std::max(total_calls(l) - 1, 1));
  if (each * earlier <= kCheckedValues) return each;
  return std::max<size_t>(kCheckedValues / earlier, 1);
}

std::vector<uint64_t> checked_positions(const bench::Keystream& keys, const Launch& l, int call) {
  const size_t each = output_values(l), n = checked_per_call(l);
  if (n >= each) return {};
  std::vector<double> unit(n);
  keys.fill_signed_unit(static_cast<uint32_t>(call), kPositionsStream, unit.data(), n);
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    // (u + 1) / 2 in [0, 1): a position below `each`
    const auto p = static_cast<uint64_t>((unit[i] + 1) * 0.5 * static_cast<double>(each));
    out[i] = std::min<uint64_t>(p, each - 1);
  }
  return out;
}

nlohmann::json checked_values(const bench::Keystream& keys, const Launch& l, int call, const std::string& raw) {
  if (raw.size() != output_bytes(l))
    throw std::invalid_argument("call " + std::to_string(call + 1) + "'s outputs came as " + std::to_string(raw.size()) +
                                " bytes, not " + std::to_string(output_bytes(l)));
  // Each output's first value and first byte, laid end to end.
  struct Span {
    size_t first, count, byte;
    bool bf16;
  };
  std::vector<Span> spans;
  size_t value = 0, byte = 0;
  for (const auto& a : l.args) {
    if (a.kind != LaunchArg::output) continue;
    spans.push_back({value, a.count, byte, a.bf16});
    value += a.count;
    byte += a.bytes();
  }
  auto at = [&](uint64_t e) {
    size_t s = 0;
    while (e >= spans[s].first + spans[s].count) ++s;
    const Span& sp = spans[s];
    const size_t i = e - sp.first;
    float v;
    if (sp.bf16) {  // a bfloat16 is a float's upper half: widened exactly
      uint16_t h;
      std::memcpy(&h, raw.data() + sp.byte + 2 * i, sizeof h);
      const uint32_t bits = uint32_t{h} << 16;
      std::memcpy(&v, &bits, sizeof v);
    } else {
      std::memcpy(&v, raw.data() + sp.byte + 4 * i, sizeof v);
    }
    return v;
  };
  const std::vector<uint64_t> positions = checked_positions(keys, l, call);
  std::vector<float> out;
  if (positions.empty()) {
    out.resize(value);
    for (size_t e = 0; e < value; ++e) out[e] = at(e);
  } else {
    out.reserve(positions.size());
    for (uint64_t e : positions) out.push_back(at(e));
  }
  return float_blob(out.data(), out.size());
}

CallsCheck check_calls(const nlohmann::json& rec, const Launch& l, const Reference& reference, double atol,
                       double rtol) {
  const int total = total_calls(l);
  const nlohmann::json& kept = rec.at("call_outputs");
  if (!kept.is_array() || static_cast<int>(kept.size()) != total - 1)
    throw std::invalid_argument("the run returned the outputs of " + std::to_string(kept.size()) +
                                " calls before the last, not " + std::to_string(total - 1));
  const bench::Keystream keys = bench::Keystream::from_hex(rec.at("input_key").get<std::string>());
  const size_t each = output_values(l);
  CallsCheck c;
  for (int call = 0; call + 1 < total; ++call) {
    std::vector<std::vector<double>> inputs;
    for (size_t i = 0; i < l.args.size(); ++i) {
      if (l.args[i].kind != LaunchArg::input) continue;
      const std::vector<float> v = draw_input(keys, l.args[i], call, i);
      inputs.emplace_back(v.begin(), v.end());
    }
    const std::vector<std::vector<double>> ref = reference(inputs);
    // the reference's outputs laid end to end, as the positions count them
    std::vector<size_t> first;
    size_t n = 0;
    for (const auto& r : ref) {
      first.push_back(n);
      n += r.size();
    }
    if (n != each)
      throw std::invalid_argument("the reference has " + std::to_string(n) + " output values, the launch " +
                                  std::to_string(each));
    const std::vector<uint64_t> positions = checked_positions(keys, l, call);
    const std::vector<float> got = floats_of(kept[static_cast<size_t>(call)]);
    const size_t count = positions.empty() ? each : positions.size();
    if (got.size() != count)
      throw std::invalid_argument("call " + std::to_string(call + 1) + " returned " + std::to_string(got.size()) +
                                  " checked values, not " + std::to_string(count));
    size_t wrong = 0, at_output = 0, at_element = 0;
    double worst = 0;
    for (size_t k = 0; k < count; ++k) {
      const uint64_t e = positions.empty() ? k : positions[k];
      size_t o = 0;
      while (o + 1 < first.size() && e >= first[o + 1]) ++o;
      const double want = ref[o][e - first[o]];
      const double err = std::isnan(got[k]) ? std::numeric_limits<double>::infinity() : std::fabs(got[k] - want);
      if (!(err <= atol + rtol * std::fabs(want))) ++wrong;
      if (err > worst || (std::isinf(err) && at_output == 0)) {
        worst = err;
        at_output = o + 1;
        at_element = e - first[o] + 1;
      }
    }
    c.checked += count;
    if (worst > c.max_error) c.max_error = worst;
    if (wrong > 0) {
      c.ok = false;
      c.call = call + 1;
      c.wrong = wrong;
      c.at_output = at_output;
      c.at_element = at_element;
      char buf[384];
      std::snprintf(buf, sizeof buf,
                    "call %d of %d: %zu of the %zu output values checked miss the reference by more than %g + %g "
                    "|ref| (the largest error %g, output %zu, element %zu); every call is checked, not only the last",
                    call + 1, total, wrong, count, atol, rtol, worst, at_output, at_element);
      c.log = buf;
      return c;
    }
  }
  return c;
}

}  // namespace cuda
