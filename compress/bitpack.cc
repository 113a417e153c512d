// Block bit packing with one fully unrolled routine per width, picked through a table.
#include "compress/bitpack.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

namespace squeeze::compress::bitpack {
namespace {

static_assert(std::endian::native == std::endian::little,
              "bit packing assumes a little-endian host");

template <unsigned W>
void pack_w(const uint32_t* in, uint8_t* out) {
  if constexpr (W == 0) {
    (void)in;
    (void)out;
  } else {
    uint64_t words[W];
    uint64_t acc = 0;
    unsigned fill = 0;
    unsigned o = 0;
#pragma GCC unroll 64
    for (unsigned i = 0; i < kBlock; ++i) {
      const uint64_t v = in[i];
      acc |= v << fill;
      if (fill + W >= 64) {
        words[o++] = acc;
        acc = fill + W > 64 ? v >> (64 - fill) : 0;
        fill = fill + W - 64;
      } else {
        fill += W;
      }
    }
    std::memcpy(out, words, sizeof words);
  }
}

template <unsigned W>
void unpack_w(const uint8_t* in, uint32_t* out) {
  if constexpr (W == 0) {
    (void)in;
    std::memset(out, 0, kBlock * sizeof(uint32_t));
  } else {
    uint64_t words[W + 1];
    std::memcpy(words, in, 8 * W);
    words[W] = 0;
    constexpr uint64_t mask = W == 32 ? 0xffffffffull : (1ull << W) - 1;
#pragma GCC unroll 64
    for (unsigned i = 0; i < kBlock; ++i) {
      const unsigned bit = i * W;
      const unsigned w = bit >> 6;
      const unsigned s = bit & 63;
      uint64_t v = words[w] >> s;
      if (s + W > 64) v |= words[w + 1] << (64 - s);
      out[i] = static_cast<uint32_t>(v & mask);
    }
  }
}

using PackFn = void (*)(const uint32_t*, uint8_t*);
using UnpackFn = void (*)(const uint8_t*, uint32_t*);

template <std::size_t... W>
constexpr std::array<PackFn, sizeof...(W)> pack_table(std::index_sequence<W...>) {
  return {&pack_w<static_cast<unsigned>(W)>...};
}
template <std::size_t... W>
constexpr std::array<UnpackFn, sizeof...(W)> unpack_table(std::index_sequence<W...>) {
  return {&unpack_w<static_cast<unsigned>(W)>...};
}

constexpr auto kPack = pack_table(std::make_index_sequence<kMaxWidth + 1>{});
constexpr auto kUnpack = unpack_table(std::make_index_sequence<kMaxWidth + 1>{});

}  // namespace

void pack64(const uint32_t* in, unsigned width, uint8_t* out) { kPack[width](in, out); }
void unpack64(const uint8_t* in, unsigned width, uint32_t* out) { kUnpack[width](in, out); }

void unpack64_unzigzag(const uint8_t* in, unsigned width, int32_t* codes) {
  uint32_t zz[kBlock];
  unpack64(in, width, zz);
  for (unsigned i = 0; i < kBlock; ++i)
    codes[i] = static_cast<int32_t>((zz[i] >> 1) ^ (0u - (zz[i] & 1u)));
}

unsigned zigzag_pack64(const int32_t* codes, uint8_t* out, std::size_t room, bool* fits) {
  uint32_t zz[kBlock];
  uint32_t any = 0;
  for (unsigned i = 0; i < kBlock; ++i) {
    zz[i] = (static_cast<uint32_t>(codes[i]) << 1) ^ static_cast<uint32_t>(codes[i] >> 31);
    any |= zz[i];
  }
  const unsigned w = bit_width(any);
  *fits = 8u * w <= room;
  if (*fits) pack64(zz, w, out);
  return w;
}

void pack_array(const uint32_t* in, uint64_t n, unsigned width, uint8_t* out) {
  const std::size_t bytes = packed_array_bytes(n, width);
  std::memset(out, 0, bytes);
  if (width == 0) return;
  uint64_t bit = 0;
  for (uint64_t i = 0; i < n; ++i, bit += width) {
    const uint64_t v = in[i];
    for (unsigned b = 0; b < width;) {  // write up to a byte at a time
      const uint64_t pos = bit + b;
      const unsigned shift = static_cast<unsigned>(pos & 7);
      const unsigned take = std::min(8u - shift, width - b);
      out[pos >> 3] =
          static_cast<uint8_t>(out[pos >> 3] | (((v >> b) & ((1u << take) - 1)) << shift));
      b += take;
    }
  }
}

uint32_t array_get(const uint8_t* packed, uint64_t i, unsigned width) {
  uint64_t v = 0;
  const uint64_t bit = i * width;
  for (unsigned b = 0; b < width;) {
    const uint64_t pos = bit + b;
    const unsigned shift = static_cast<unsigned>(pos & 7);
    const unsigned take = std::min(8u - shift, width - b);
    v |= static_cast<uint64_t>((packed[pos >> 3] >> shift) & ((1u << take) - 1)) << b;
    b += take;
  }
  return static_cast<uint32_t>(v);
}

}  // namespace squeeze::compress::bitpack
