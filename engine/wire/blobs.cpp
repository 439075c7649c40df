#include "wire/blobs.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace wire {
namespace {

using json = nlohmann::json;
using Bytes = json::binary_t;

// The tag of the empty byte string that stands for lifted string i: kTagBase + i.
constexpr uint64_t kTagBase = 0x656e67696e650000;  // "engine" and room for 2^16 strings
constexpr uint64_t kMostLifted = 1 << 16;

void lift(json& j, std::vector<Bytes>& lifted) {
  if (j.is_binary()) {
    if (j.get_binary().size() < kLiftedBytes) return;
    if (lifted.size() == kMostLifted) throw std::invalid_argument("a message holds too many large byte strings");
    lifted.push_back(std::move(j.get_binary()));
    j = json::binary(Bytes::container_type{}, kTagBase + (lifted.size() - 1));
  } else if (j.is_structured()) {
    for (auto& child : j) lift(child, lifted);
  }
}

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

struct Reader {
  std::string_view in;
  size_t at = 0;
  uint64_t u64(const char* what) {
    uint64_t v;
    if (in.size() - at < sizeof v) throw std::invalid_argument(std::string("a packed message ends before ") + what);
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string_view take(uint64_t n, const char* what) {
    if (n > in.size() - at) throw std::invalid_argument(std::string("a packed message ends inside ") + what);
    auto s = in.substr(at, n);
    at += n;
    return s;
  }
};

void restore(json& j, const std::vector<std::string_view>& lifted, std::vector<bool>& used) {
  if (j.is_binary()) {
    const auto& b = j.get_binary();
    if (!b.has_subtype()) return;
    const uint64_t tag = b.subtype();
    if (tag < kTagBase || tag - kTagBase >= lifted.size() || !b.empty())
      throw std::invalid_argument("a packed message's byte string has tag " + std::to_string(tag) +
                                  ", which names none of its " + std::to_string(lifted.size()) + " lifted strings");
    const uint64_t i = tag - kTagBase;
    if (used[i]) throw std::invalid_argument("a packed message names lifted string " + std::to_string(i) + " twice");
    used[i] = true;
    const auto* p = reinterpret_cast<const uint8_t*>(lifted[i].data());
    j = json::binary(Bytes::container_type(p, p + lifted[i].size()));
  } else if (j.is_structured()) {
    for (auto& child : j) restore(child, lifted, used);
  }
}

}  // namespace

std::string pack(json message) {
  std::vector<Bytes> lifted;
  lift(message, lifted);
  const auto cbor = json::to_cbor(message);
  size_t total = 2 * sizeof(uint64_t) + cbor.size() + lifted.size() * sizeof(uint64_t);
  for (const auto& b : lifted) total += b.size();
  std::string out;
  out.reserve(total);
  put_u64(out, cbor.size());
  out.append(reinterpret_cast<const char*>(cbor.data()), cbor.size());
  put_u64(out, lifted.size());
  for (const auto& b : lifted) put_u64(out, b.size());
  for (const auto& b : lifted) out.append(reinterpret_cast<const char*>(b.data()), b.size());
  return out;
}

json unpack(std::string_view bytes) {
  Reader r{bytes};
  const auto cbor = r.take(r.u64("its CBOR's length"), "its CBOR");
  const uint64_t count = r.u64("its count of lifted strings");
  if (count > kMostLifted) throw std::invalid_argument("a packed message claims " + std::to_string(count) + " lifted strings");
  std::vector<uint64_t> sizes(count);
  for (auto& n : sizes) n = r.u64("a lifted string's length");
  std::vector<std::string_view> lifted;
  lifted.reserve(count);
  for (uint64_t n : sizes) lifted.push_back(r.take(n, "a lifted string"));
  if (r.at != bytes.size()) throw std::invalid_argument("a packed message has " + std::to_string(bytes.size() - r.at) +
                                                        " bytes past its last lifted string");
  json message = json::from_cbor(cbor, true, true, json::cbor_tag_handler_t::store);
  std::vector<bool> used(count, false);
  restore(message, lifted, used);
  for (uint64_t i = 0; i < count; ++i)
    if (!used[i]) throw std::invalid_argument("a packed message's lifted string " + std::to_string(i) + " is named by none");
  return message;
}

}  // namespace wire
