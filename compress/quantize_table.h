// Table-driven quantize codes for the 16-bit dtypes (bfloat16, float16), message modes.
//
// A 16-bit element has at most 65536 values, and with one (offset, step, bound) for the
// whole message its code and escape decision depend on nothing but its bits. So the encoder
// runs the exact arithmetic of qmath::quantize_one (through the same vector kernel and
// scalar check the chunked path uses) once per distinct finite value in [min, max] and then
// looks every element up: the same codes and escapes, bit for bit, at a fraction of the
// per-element cost. Worth it when the message has more elements than the table has entries
// (CodeTable::worth_it); rel-row mode changes the parameters every row and never uses it.
//
// Entries are indexed by an order-preserving key of the element's bits (negative values
// below positive ones, -0 just below +0), minus the key of min (or of -0). Finite values
// outside [min, max], and NaN/Inf (whose keys lie beyond every finite key), hit one extra
// entry that says "escape", so a lookup never reads outside the table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compress/codec.h"
#include "compress/quantize_math.h"

namespace squeeze::compress::qtable {

inline constexpr int32_t kEscape = INT32_MIN;  // not a code: codes stay within +-(2^29 - 1)

// Order-preserving key of a 16-bit float pattern (bf16 and fp16 alike).
inline uint32_t key(uint32_t h) { return h ^ (0x8000u | (0x7fffu & (0u - (h >> 15)))); }
// The pattern with key k (key is its own inverse up to the sign flag).
inline uint16_t pattern(uint32_t k) {
  return static_cast<uint16_t>(k ^ (k >= 0x8000u ? 0x8000u : 0xffffu));
}

class CodeTable {
 public:
  // Entries a table over finite values [mn, mx] of dtype D has (0 when mn > mx). mn and mx
  // must be values of D (as the encoder's range scan finds them).
  template <Dtype D>
  static std::size_t entries(float mn, float mx);
  // Whether a table pays off for n elements with this range (building costs about one
  // quantize_one per entry, a lookup a fraction of one).
  template <Dtype D>
  static bool worth_it(float mn, float mx, uint64_t n) {
    return n >= 2 * static_cast<uint64_t>(entries<D>(mn, mx));
  }

  // Fills the table for dtype D, finite values [mn, mx] and parameters p.
  template <Dtype D>
  void build(float mn, float mx, const qmath::Params& p);

  // Codes of n little-endian 16-bit elements at src into codes[0..n) (0 for escapes).
  // Returns true when none escapes.
  bool lookup(const uint8_t* src, std::size_t n, int32_t* codes) const;

  // Whether element bits h escape (NaN, Inf, or missing the bound).
  bool escapes(uint16_t h) const { return entry(h) == kEscape; }
  // The table's entry for bits h: the code, or kEscape.
  int32_t entry(uint16_t h) const {
    const uint32_t i = key(h) - lo_;
    return t_[i < n_ ? i : n_];
  }

 private:
  uint32_t lo_ = 0;  // key of the first entry
  uint32_t n_ = 0;   // entries; t_[n_] is the escape sentinel
  std::vector<int32_t> t_ = std::vector<int32_t>(1, kEscape);
};

// The finite range of n little-endian 16-bit elements of dtype D at src, as keys folded
// into *kmin / *kmax (start with 0xffff / 0; kmin > kmax afterwards: nothing finite). An
// integer scan of the raw bits, much cheaper than widening to float first; key_value turns
// the keys back into values. It may report -0 where a float scan reports +0 or the
// reverse, which changes nothing the encoder derives from the range (FORMAT.md: offset 0
// and max - min are the same for either zero).
template <Dtype D>
void range_keys(const uint8_t* src, std::size_t n, uint32_t* kmin, uint32_t* kmax);
template <Dtype D>
float key_value(uint32_t k);

// Codes of v[0..n) by the vector kernel (AVX-512 or AVX2 as qsimd::level() says, else the
// scalar loop),
// exactly qmath::quantize_one's codes, 0 where an element misses the bound. Returns true
// when every element meets it.
template <Dtype D>
bool quantize_codes(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes);

}  // namespace squeeze::compress::qtable
