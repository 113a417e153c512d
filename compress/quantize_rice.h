// The quantize body's optional Rice-coded payload (flag 0x02, compress/FORMAT.md): per block
// of 64 codes one parameter byte (0: every code is 0, no bits; else k + 1) and, for each
// zigzagged code z, q = z >> k as q zero bits and a one bit, then the k low bits of z; a
// quotient of 32 or more is 32 zero bits and z in 30 raw bits instead. Bits LSB first.
// CPU only: the collective network's frames, which never reach the CUDA codecs.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace squeeze::compress::rice {

// Appends bit fields to a buffer, LSB first; past `cap` bytes it stops writing and reports
// !ok() (the encoder then falls back to a stored frame).
class Writer {
 public:
  Writer(uint8_t* out, std::size_t cap) : out_(out), cap_(cap) {}
  // v < 2^bits, bits <= 32.
  void put(uint32_t v, unsigned bits) {
    acc_ |= static_cast<uint64_t>(v) << fill_;
    fill_ += bits;
    if (fill_ >= 32) flush32();
  }
  // v < 2^bits, bits <= 32 (one call for a whole short code).
  void put_wide(uint64_t v, unsigned bits) {
    acc_ |= v << fill_;
    fill_ += bits;
    if (fill_ >= 32) flush32();
  }
  // Rice-codes n <= 64 zigzagged codes z with parameter k (compress/FORMAT.md); `any` is the
  // OR of the codes (a bound on the longest). Defined in quantize_rice.cc, where encode_block
  // inlines it.
  void put_codes(const uint32_t* z, unsigned n, unsigned k, uint32_t any);
  bool ok() const { return ok_; }
  // Writes the last partial byte (zero high bits); returns the bytes written.
  std::size_t finish();

 private:
  // Inline, so that a Writer copied into a local (encode_block) stays in registers.
  void flush32() {
    if (ok_ && cap_ - at_ >= 4) {
      auto word = static_cast<uint32_t>(acc_);
      if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap32(word);
      std::memcpy(out_ + at_, &word, 4);
      at_ += 4;
    } else {
      ok_ = false;
    }
    acc_ >>= 32;
    fill_ -= 32;
  }
  uint8_t* out_;
  std::size_t cap_;
  std::size_t at_ = 0;
  uint64_t acc_ = 0;
  unsigned fill_ = 0;
  bool ok_ = true;
};

// Codes n <= 64 codes as one block; returns its parameter byte.
uint8_t encode_block(const int32_t* codes, unsigned n, Writer* w);
// The same without the BMI2 variant encode_block picks on CPUs that have it (tests compare
// the two).
uint8_t encode_block_portable(const int32_t* codes, unsigned n, Writer* w);

}  // namespace squeeze::compress::rice
