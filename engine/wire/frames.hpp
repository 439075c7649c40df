// The wire between the engine (engine/bench) and its evaluation process
// (engine/evaluator): length-prefixed frames on a stream socket, each a packed message
// (wire/blobs.hpp), a request down, a reply up.
#pragma once

#include <string>

namespace bench::detail {

// The first frame the evaluation process sends, once it is ready for requests.
constexpr const char* kReady = "ready";

// Length-prefixed frames on a stream socket; false on EOF or error.
bool write_frame(int fd, const std::string& data);
bool read_frame(int fd, std::string& data);

}  // namespace bench::detail
