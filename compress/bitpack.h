// Fixed-width bit packing, the quantize codec's payload format (and anyone else's).
//
// Block packing: 64 unsigned values of the same width w (0..32 bits) occupy exactly 8*w
// bytes, value i at bits [i*w, (i+1)*w) of the block's little-endian bit stream (LSB
// first). Width 0 means the block is all zeros and takes no bytes. Blocks are independent,
// so a GPU can pack them in parallel once it has the prefix sum of their widths.
//
// Array packing: n values of width w in ceil(n*w/8) bytes, same bit order, for small
// side arrays such as the row map; not meant for hot loops.
#pragma once

#include <cstddef>
#include <cstdint>

namespace squeeze::compress::bitpack {

inline constexpr unsigned kBlock = 64;
inline constexpr unsigned kMaxWidth = 32;

// Bits needed to hold v (0 for 0).
inline unsigned bit_width(uint32_t v) {
  return v == 0 ? 0u : 32u - static_cast<unsigned>(__builtin_clz(v));
}

// in[0..63] must each fit in `width` bits; writes exactly 8*width bytes to out.
void pack64(const uint32_t* in, unsigned width, uint8_t* out);
// Reads exactly 8*width bytes from in; writes out[0..63].
void unpack64(const uint8_t* in, unsigned width, uint32_t* out);
// One quantize block: zigzags codes[0..63] (c -> (c << 1) ^ (c >> 31)), returns the width w
// of the widest result, and packs the 64 results at out (pack64) when 8*w <= room (*fits
// tells which; nothing is written otherwise). bitpack_avx512.h has the AVX-512 version.
unsigned zigzag_pack64(const int32_t* codes, uint8_t* out, std::size_t room, bool* fits);
// Its inverse: unpack64 of a block of `width`, zigzag-decoded into codes[0..63].
void unpack64_unzigzag(const uint8_t* in, unsigned width, int32_t* codes);

inline std::size_t packed_array_bytes(uint64_t n, unsigned width) {
  return static_cast<std::size_t>((n * width + 7) / 8);
}
// Writes packed_array_bytes(n, width) bytes; unused bits of the last byte are zero.
void pack_array(const uint32_t* in, uint64_t n, unsigned width, uint8_t* out);
// Value i of an array packed by pack_array (caller keeps i < n).
uint32_t array_get(const uint8_t* packed, uint64_t i, unsigned width);

}  // namespace squeeze::compress::bitpack
