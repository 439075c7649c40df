#include "parallel/rendezvous/rendezvous.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace rendezvous {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int number(const char* name, const std::string& value) {
  try {
    size_t end = 0;
    int v = std::stoi(value, &end);
    if (end == value.size() && v >= 0) return v;
  } catch (...) {
  }
  throw std::invalid_argument(std::string(name) + "='" + value + "' is not a number");
}

void set(const char* name, int value) { setenv(name, std::to_string(value).c_str(), 1); }

}  // namespace

void publish(const Place& p) {
  set("ENGINE_RANK", p.rank);
  set("ENGINE_WORLD_SIZE", p.size);
  set("ENGINE_LOCAL_RANK", p.local_rank);
  if (p.local_size > 0) set("ENGINE_LOCAL_WORLD_SIZE", p.local_size);
  setenv("ENGINE_RENDEZVOUS", p.store.c_str(), 1);
}

std::optional<Place> read() {
  const std::string rank = env("ENGINE_RANK"), size = env("ENGINE_WORLD_SIZE");
  if (rank.empty() && size.empty()) return std::nullopt;
  if (rank.empty() || size.empty())
    throw std::invalid_argument("ENGINE_RANK and ENGINE_WORLD_SIZE go together (one is unset)");
  Place p;
  p.rank = number("ENGINE_RANK", rank);
  p.size = number("ENGINE_WORLD_SIZE", size);
  if (p.size < 1 || p.rank >= p.size)
    throw std::invalid_argument("ENGINE_RANK=" + rank + " is not a rank of ENGINE_WORLD_SIZE=" + size);
  p.store = env("ENGINE_RENDEZVOUS");
  if (p.size > 1 && p.store.empty())
    throw std::invalid_argument("ENGINE_RENDEZVOUS is unset: say where the ranks meet (file:PATH or tcp:HOST:PORT)");
  const std::string local = env("ENGINE_LOCAL_RANK"), local_size = env("ENGINE_LOCAL_WORLD_SIZE");
  p.local_rank = local.empty() ? p.rank : number("ENGINE_LOCAL_RANK", local);
  p.local_size = local_size.empty() ? 0 : number("ENGINE_LOCAL_WORLD_SIZE", local_size);
  p.backend = env("ENGINE_DIST_BACKEND");
  if (!p.backend.empty() && p.backend != "gloo" && p.backend != "nccl")
    throw std::invalid_argument("ENGINE_DIST_BACKEND is '" + p.backend + "': gloo or nccl");
  if (auto t = env("ENGINE_DIST_TIMEOUT"); !t.empty()) p.timeout_s = number("ENGINE_DIST_TIMEOUT", t);
  return p;
}

std::string user_store() { return env("ENGINE_RENDEZVOUS"); }

std::string tcp_store(const std::string& host) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  if (port == 0) throw std::runtime_error("rendezvous: no free TCP port for the trainer ranks' store");
  return "tcp:" + host + ":" + std::to_string(port);
}

std::string file_store(const std::string& dir) { return "file:" + dir + "/store"; }

}  // namespace rendezvous
