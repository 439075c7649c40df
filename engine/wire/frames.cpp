#include "wire/frames.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace bench::detail {

static bool send_all(int fd, const char* p, size_t left) {
  while (left > 0) {
    ssize_t n = send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// The length and the bytes in two sends, so a message of tens of MiB is not copied first.
bool write_frame(int fd, const std::string& data) {
  const uint64_t len = data.size();
  return send_all(fd, reinterpret_cast<const char*>(&len), sizeof len) && send_all(fd, data.data(), data.size());
}

static bool read_exact(int fd, char* p, size_t len) {
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool read_frame(int fd, std::string& data) {
  uint64_t len = 0;
  if (!read_exact(fd, reinterpret_cast<char*>(&len), sizeof len)) return false;
  if (len > (uint64_t(1) << 32)) return false;
  data.resize(len);
  return read_exact(fd, data.data(), len);
}

}  // namespace bench::detail
