#include "wire/frames.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace bench::detail {

bool write_frame(int fd, const std::string& data) {
  uint64_t len = data.size();
  std::string buf(reinterpret_cast<const char*>(&len), sizeof len);
  buf += data;
  const char* p = buf.data();
  size_t left = buf.size();
  while (left > 0) {
    ssize_t n = send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
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
