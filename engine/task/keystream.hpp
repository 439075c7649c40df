// Inputs no kernel can predict: the ChaCha block function with 8 rounds in counter mode
// under a 256-bit key. Without the key, the values of one call say nothing about another
// call's, unlike an invertible generator (splitmix64: two outputs give its state away and
// with it every later call). The key is drawn from the operating system, used while the
// inputs are made, and wiped; a fixed seed (for debugging) makes a known key instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace bench {

class Keystream {
 public:
  static Keystream random();                // key from getrandom
  static Keystream seeded(uint64_t seed);   // the same values for a seed on every machine
  // The key as 64 hex digits, and the stream of such a key: for a process that checks a
  // run after the run's own process has ended (a CUDA run's every call, cuda/calls.hpp).
  // Throws std::invalid_argument for anything but 64 hex digits.
  static Keystream from_hex(const std::string& hex);
  std::string hex() const;
  ~Keystream() { wipe(); }
  Keystream(const Keystream&) = delete;
  Keystream& operator=(const Keystream&) = delete;
  Keystream(Keystream&& o) noexcept;

  // Values in [-1, 1) with 53 random bits each, for buffer `buffer` of call `call`: every
  // (call, buffer) pair is its own stream. `from` (a multiple of 8, a block's 8 values)
  // starts at that value of the stream, so parts of one stream can be filled apart.
  void fill_signed_unit(uint32_t call, uint32_t buffer, double* out, size_t n, uint64_t from = 0) const;
  // The 64-bit words behind those values (from, as above, a multiple of 8).
  void fill_words(uint32_t call, uint32_t buffer, uint64_t* out, size_t n, uint64_t from = 0) const;
  // A word's value in fill_signed_unit: its top 53 bits, in [-1, 1), exactly.
  static double signed_unit(uint64_t w) { return 2 * (static_cast<double>(w >> 11) * 0x1.0p-53) - 1; }
  // One 64-bit word of stream (call, buffer) at `index`.
  uint64_t word(uint32_t call, uint32_t buffer, uint64_t index) const;
  void wipe();  // forgets the key (the memory is cleared, not only released)

 private:
  Keystream() = default;
  // ChaCha's input words for block `counter` of stream (call, buffer).
  void state(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t s[16]) const;
  void block(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t out[16]) const;
  // Blocks counter .. counter + 7 at once, each as block() gives it.
  void blocks(uint32_t call, uint32_t buffer, uint64_t counter, uint32_t out[8][16]) const;
  uint32_t key_[8] = {};
};

namespace detail {
// Whether this machine draws eight blocks with AVX2 (else baseline SSE2), and the eight
// blocks drawn either way (state: the first block's input words): for tests, which check
// that both give ChaCha8's values wherever both can run.
bool keystream_avx2();
void chacha8_eight_blocks(const uint32_t state[16], uint32_t out[8][16], bool avx2);
}  // namespace detail

}  // namespace bench
