// Inside engine/bench only: the zygote process and its framing.
#pragma once

#include <sys/types.h>

#include <string>

namespace bench::detail {

// The first frame the evaluation process sends, once it is ready for requests.
constexpr const char* kReady = "ready";

// Length-prefixed frames on a stream socket; false on EOF or error.
bool write_frame(int fd, const std::string& data);
bool read_frame(int fd, std::string& data);

// The zygote's whole life: serves requests on `sock` until it closes; never returns.
[[noreturn]] void zygote_main(int sock, pid_t engine);

}  // namespace bench::detail
