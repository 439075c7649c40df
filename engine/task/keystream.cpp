#include "task/keystream.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bench {

namespace {

inline uint32_t rotl(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

inline void quarter(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d) {
  a += b; d ^= a; d = rotl(d, 16);
  c += d; b ^= c; b = rotl(b, 12);
  a += b; d ^= a; d = rotl(d, 8);
  c += d; b ^= c; b = rotl(b, 7);
}

// Eight blocks at once, one a lane: the same arithmetic as `quarter`, in GCC's vector
// extension, which the compiler maps onto the vector registers the target has (one AVX2
// register a state word, or two SSE2 ones). A fill of millions of values took 5.4-5.9 ns a
// value so on the 2-core EPYC, against 12.1-13.6 one block at a time; each block's values
// are those of Keystream::block.
constexpr int kLanes = 8;
typedef uint32_t Lanes __attribute__((vector_size(4 * kLanes)));

// A macro, not a function: a vector wider than the target's registers passed by value
// changes the call's ABI (GCC warns), and by reference it is not kept in registers.
#define ENGINE_LANES_QUARTER(a, b, c, d)                   \
  do {                                                     \
    a += b; d ^= a; d = (d << 16) | (d >> 16);             \
    c += d; b ^= c; b = (b << 12) | (b >> 20);             \
    a += b; d ^= a; d = (d << 8) | (d >> 24);              \
    c += d; b ^= c; b = (b << 7) | (b >> 25);              \
  } while (0)

}  // namespace

Keystream Keystream::random() {
  Keystream k;
  size_t got = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(k.key_);
  while (got < sizeof k.key_) {
    ssize_t n = getrandom(bytes + got, sizeof k.key_ - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return k;
}

Keystream Keystream::seeded(uint64_t seed) {
  Keystream k;
  uint64_t s = seed;
  for (int i = 0; i < 8; i += 2) {  // splitmix64 spreads the seed over the key
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    k.key_[i] = static_cast<uint32_t>(z);
    k.key_[i + 1] = static_cast<uint32_t>(z >> 32);
  }
  return k;
}

Keystream Keystream::from_hex(const std::string& hex) {
  if (hex.size() != 64) throw std::invalid_argument("a key is 64 hex digits, not " + std::to_string(hex.size()));
  Keystream k;
  for (size_t i = 0; i < 64; ++i) {
    const char c = hex[i];
    uint32_t v;
    if (c >= '0' && c <= '9') v = static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v = static_cast<uint32_t>(c - 'a' + 10);
    else throw std::invalid_argument("a key is 64 lower-case hex digits");
    k.key_[i / 8] |= v << (4 * (7 - i % 8));
  }
  return k;
}

std::string Keystream::hex() const {
  static const char digits[] = "0123456789abcdef";
  std::string out(64, '0');
  for (size_t i = 0; i < 64; ++i) out[i] = digits[(key_[i / 8] >> (4 * (7 - i % 8))) & 0xF];
  return out;
}

Keystream::Keystream(Keystream&& o) noexcept {
  std::memcpy(key_, o.key_, sizeof key_);
  o.wipe();
}

void Keystream::wipe() { explicit_bzero(key_, sizeof key_); }

void Keystream::state(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t s[16]) const {
  static constexpr uint32_t kSigma[4] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};  // "expand 32-byte k"
  std::memcpy(s, kSigma, sizeof kSigma);
  std::memcpy(s + 4, key_, sizeof key_);
  s[12] = static_cast<uint32_t>(counter);
  s[13] = static_cast<uint32_t>(counter >> 32);
  s[14] = call;
  s[15] = buffer;
}

void Keystream::block(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t out[16]) const {
  uint32_t s[16];
  state(call, buffer, counter, s);
  uint32_t x[16];
  std::memcpy(x, s, sizeof x);
  for (int r = 0; r < 8; r += 2) {
    quarter(x[0], x[4], x[8], x[12]);
    quarter(x[1], x[5], x[9], x[13]);
    quarter(x[2], x[6], x[10], x[14]);
    quarter(x[3], x[7], x[11], x[15]);
    quarter(x[0], x[5], x[10], x[15]);
    quarter(x[1], x[6], x[11], x[12]);
    quarter(x[2], x[7], x[8], x[13]);
    quarter(x[3], x[4], x[9], x[14]);
  }
  for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
  explicit_bzero(x, sizeof x);
  explicit_bzero(s, sizeof s);
}

namespace {

// ChaCha8 of eight consecutive counters from `state` (its words 12 and 13 the first
// counter's), one a lane. Inlined into two entries compiled for different targets.
__attribute__((always_inline)) inline void eight_blocks(const uint32_t state[16], uint32_t out[8][16]) {
  Lanes s[16], x[16];
  for (int w = 0; w < 16; ++w)
    for (int l = 0; l < kLanes; ++l) s[w][l] = state[w];
  const uint64_t counter = uint64_t(state[12]) | uint64_t(state[13]) << 32;
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t c = counter + static_cast<uint64_t>(l);
    s[12][l] = static_cast<uint32_t>(c);
    s[13][l] = static_cast<uint32_t>(c >> 32);
  }
  for (int w = 0; w < 16; ++w) x[w] = s[w];
  for (int r = 0; r < 8; r += 2) {
    ENGINE_LANES_QUARTER(x[0], x[4], x[8], x[12]);
    ENGINE_LANES_QUARTER(x[1], x[5], x[9], x[13]);
    ENGINE_LANES_QUARTER(x[2], x[6], x[10], x[14]);
    ENGINE_LANES_QUARTER(x[3], x[7], x[11], x[15]);
    ENGINE_LANES_QUARTER(x[0], x[5], x[10], x[15]);
    ENGINE_LANES_QUARTER(x[1], x[6], x[11], x[12]);
    ENGINE_LANES_QUARTER(x[2], x[7], x[8], x[13]);
    ENGINE_LANES_QUARTER(x[3], x[4], x[9], x[14]);
  }
  for (int w = 0; w < 16; ++w) {
    const Lanes v = x[w] + s[w];
    for (int l = 0; l < kLanes; ++l) out[l][w] = v[l];
  }
  explicit_bzero(x, sizeof x);
  explicit_bzero(s, sizeof s);
}

// One register a state word of eight blocks with AVX2; two SSE2 registers without.
__attribute__((target("avx2"))) void eight_blocks_avx2(const uint32_t state[16], uint32_t out[8][16]) {
  eight_blocks(state, out);
}
void eight_blocks_base(const uint32_t state[16], uint32_t out[8][16]) { eight_blocks(state, out); }

}  // namespace

namespace detail {

bool keystream_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

void chacha8_eight_blocks(const uint32_t state[16], uint32_t out[8][16], bool avx2) {
  if (avx2) eight_blocks_avx2(state, out);
  else eight_blocks_base(state, out);
}

}  // namespace detail

void Keystream::blocks(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t out[8][16]) const {
  uint32_t s[16];
  state(call, buffer, counter, s);
  detail::chacha8_eight_blocks(s, out, detail::keystream_avx2());
  explicit_bzero(s, sizeof s);
}

uint64_t Keystream::word(uint32_t call, uint32_t buffer, uint64_t index) const {
  uint32_t b[16];
  block(call, buffer, index / 8, b);
  size_t i = 2 * (index % 8);
  return uint64_t(b[i]) | uint64_t(b[i + 1]) << 32;
}

void Keystream::fill_words(uint32_t call, uint32_t buffer, uint64_t* out, size_t n, uint64_t from) const {
  if (from % 8 != 0) throw std::invalid_argument("a keystream is filled from a multiple of 8 values");
  auto put = [out](size_t at, const uint32_t b[16], size_t count) {
    for (size_t j = 0; j < count; ++j) out[at + j] = uint64_t(b[2 * j]) | uint64_t(b[2 * j + 1]) << 32;
  };
  size_t i = 0;
  uint32_t many[kLanes][16];
  for (; n - i >= 8 * kLanes; i += 8 * kLanes) {
    blocks(call, buffer, (from + i) / 8, many);
    for (int l = 0; l < kLanes; ++l) put(i + 8 * static_cast<size_t>(l), many[l], 8);
  }
  explicit_bzero(many, sizeof many);
  uint32_t b[16];
  for (; i < n; i += 8) {
    block(call, buffer, (from + i) / 8, b);
    put(i, b, std::min<size_t>(8, n - i));
  }
  explicit_bzero(b, sizeof b);
}

void Keystream::fill_signed_unit(uint32_t call, uint32_t buffer, double* out, size_t n, uint64_t from) const {
  constexpr size_t kChunk = 512;
  uint64_t w[kChunk];
  for (size_t i = 0; i < n; i += kChunk) {
    const size_t m = std::min(kChunk, n - i);
    fill_words(call, buffer, w, m, from + i);
    for (size_t j = 0; j < m; ++j) out[i + j] = signed_unit(w[j]);
  }
  explicit_bzero(w, sizeof w);
}

}  // namespace bench
