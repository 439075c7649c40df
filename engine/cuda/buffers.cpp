#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "cuda/cuda.hpp"

namespace cuda {

nlohmann::json float_blob(const float* values, size_t count) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(values);
  return nlohmann::json::binary(std::vector<std::uint8_t>(bytes, bytes + count * sizeof(float)));
}

std::vector<float> floats_of(const nlohmann::json& buffer) {
  if (buffer.is_binary()) {
    const auto& bytes = buffer.get_binary();
    if (bytes.size() % sizeof(float) != 0)
      throw std::invalid_argument("a buffer of " + std::to_string(bytes.size()) + " bytes is not one of floats");
    std::vector<float> out(bytes.size() / sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  if (!buffer.is_array()) throw std::invalid_argument("a buffer must be bytes of floats or a list of numbers");
  std::vector<float> out;
  out.reserve(buffer.size());
  for (const auto& v : buffer) {
    if (!v.is_number()) throw std::invalid_argument("a buffer holds a value that is not a number");
    out.push_back(v.get<float>());
  }
  return out;
}

void blobs_to_numbers(nlohmann::json& buffers) {
  if (!buffers.is_array()) return;
  for (auto& b : buffers) {
    if (!b.is_binary()) continue;
    nlohmann::json numbers = nlohmann::json::array();
    for (float v : floats_of(b)) numbers.push_back(static_cast<double>(v));
    b = std::move(numbers);
  }
}

}  // namespace cuda
