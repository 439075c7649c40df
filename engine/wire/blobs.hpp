// Messages whose large byte strings travel beside their CBOR, not inside it. A CUDA run's
// record holds buffers of tens of MiB (a call's outputs, the values kept for the check),
// and nlohmann's CBOR reader takes a byte string byte by byte: 48 MiB took 0.4 s to read
// on the 2-core EPYC. Here the structure stays CBOR, every byte string of kLiftedBytes or
// more is replaced by a tagged empty one naming its place in a list that follows, and the
// list is copied in and out whole.
//
// Layout: u64 CBOR length, the CBOR, u64 count of lifted strings, a u64 length each, then
// their bytes end to end (host byte order: both ends are this build on one machine).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace wire {

constexpr size_t kLiftedBytes = size_t{1} << 16;

// `message` packed; taken by value, so that a caller that moves it in pays no copy of its
// buffers before they are written out.
std::string pack(nlohmann::json message);

// The message `pack` made. Throws std::invalid_argument naming what is wrong (a length past
// the end, a tag naming no lifted string or one named twice, a string named by none) and
// nlohmann's parse error for bad CBOR: bytes from a kernel's process are not trusted.
nlohmann::json unpack(std::string_view bytes);

}  // namespace wire
