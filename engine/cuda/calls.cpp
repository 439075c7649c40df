#include "cuda/calls.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cuda/cuda.hpp"
#include "task/between_calls.hpp"

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

// Values a part of a call's outputs holds at least, for the kept values and the check.
constexpr size_t kValuesAPart = 32768;

// Words [0, n) of stream (call, stream), each given to each(i, word), in parts of whole
// ChaCha blocks over the between-call workers (task/between_calls.hpp): the words one pass
// gives, however many workers there are. A part fills a small buffer at a time, wiped after.
template <class Each>
void words_in_parts(const bench::Keystream& keys, uint32_t call, uint32_t stream, size_t n, Each each) {
  constexpr size_t kBlock = 8, kChunk = 512, kBlocksAPart = 4096;
  bench::for_parts((n + kBlock - 1) / kBlock, kBlocksAPart, [&](size_t, size_t first, size_t last) {
    uint64_t words[kChunk];
    const size_t end = std::min(last * kBlock, n);
    for (size_t i = first * kBlock; i < end; i += kChunk) {
      const size_t m = std::min(kChunk, end - i);
      keys.fill_words(call, stream, words, m, i);
      for (size_t j = 0; j < m; ++j) each(i + j, words[j]);
    }
    explicit_bzero(words, sizeof words);
  });
}

// The values draw_input describes, as floats or as the doubles they equal (the check's).
template <class Value>
std::vector<Value> drawn(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg,
                         std::vector<uint16_t>* bits) {
  std::vector<Value> values(a.count);
  if (a.bf16 && bits) bits->resize(a.count);
  uint16_t* half = a.bf16 && bits ? bits->data() : nullptr;
  const bool bf16 = a.bf16;
  words_in_parts(keys, static_cast<uint32_t>(call), static_cast<uint32_t>(arg), a.count,
                 [&values, half, bf16](size_t i, uint64_t w) {
                   // 24 bits a value, below 1: each is a float exactly, in [-1, 1). This is
                   // floor(2^23 u) / 2^23 for the word's value u (Keystream::signed_unit),
                   // in integers: u = m 2^-52 - 1 with m its top 53 bits, exactly.
                   float v = static_cast<float>(static_cast<int32_t>(w >> 40) - 8388608) * 0x1.0p-23f;
                   if (bf16) {
                     uint16_t b = 0;
                     v = to_bf16(v, b);
                     if (half) half[i] = b;
                   }
                   values[i] = v;
                 });
  return values;
}

}  // namespace

std::vector<float> draw_input(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg,
                              std::vector<uint16_t>* bits) {
  return drawn<float>(keys, a, call, arg, bits);
}

std::vector<double> draw_input_doubles(const bench::Keystream& keys, const LaunchArg& a, int call, size_t arg) {
  return drawn<double>(keys, a, call, arg, nullptr);
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
  std::vector<uint64_t> out(n);
  words_in_parts(keys, static_cast<uint32_t>(call), kPositionsStream, n, [&out, each](size_t i, uint64_t w) {
    // (u + 1) / 2 in [0, 1): a position below `each`
    const double u = bench::Keystream::signed_unit(w);
    const auto p = static_cast<uint64_t>((u + 1) * 0.5 * static_cast<double>(each));
    out[i] = std::min<uint64_t>(p, each - 1);
  });
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
  std::vector<float> out(positions.empty() ? value : positions.size());
  bench::for_parts(out.size(), kValuesAPart, [&](size_t, size_t from, size_t to) {
    for (size_t k = from; k < to; ++k) out[k] = at(positions.empty() ? k : positions[k]);
  });
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
      inputs.push_back(draw_input_doubles(keys, l.args[i], call, i));
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
    // In parts, each its own misses and its first worst value, merged in order by the same
    // rule: the counts and the element named are those of one pass.
    struct Part {
      size_t wrong = 0, at_output = 0, at_element = 0;
      double worst = 0;
      void take(double err, size_t output, size_t element) {
        if (err > worst || (std::isinf(err) && at_output == 0)) {
          worst = err;
          at_output = output;
          at_element = element;
        }
      }
    };
    std::vector<Part> parts(bench::parts_of(count, kValuesAPart));
    bench::for_parts(count, kValuesAPart, [&](size_t part, size_t from, size_t to) {
      Part& p = parts[part];
      for (size_t k = from; k < to; ++k) {
        const uint64_t e = positions.empty() ? k : positions[k];
        size_t o = 0;
        while (o + 1 < first.size() && e >= first[o + 1]) ++o;
        const double want = ref[o][e - first[o]];
        const double err = std::isnan(got[k]) ? std::numeric_limits<double>::infinity() : std::fabs(got[k] - want);
        if (!(err <= atol + rtol * std::fabs(want))) ++p.wrong;
        p.take(err, o + 1, e - first[o] + 1);
      }
    });
    Part all;
    for (const Part& p : parts) {
      all.wrong += p.wrong;
      if (p.at_output > 0) all.take(p.worst, p.at_output, p.at_element);
    }
    const size_t wrong = all.wrong, at_output = all.at_output, at_element = all.at_element;
    const double worst = all.worst;
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
