// Building blocks of the lossless codec's packed blocks: the sign rotation and byte-plane
// split, and frame-of-reference bit packing of one plane segment. Internal to
// lossless_encode.cc / lossless_decode.cc.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace squeeze::compress::lossless_detail {

static_assert(std::endian::native == std::endian::little,
              "bit packing assumes a little-endian host");

// memcpy with the common small sizes inlined (zero-map groups are 1, 2, 4 or 16 bytes).
inline void copy_small(uint8_t* dst, const uint8_t* src, std::size_t n) {
  switch (n) {
    case 16: std::memcpy(dst, src, 16); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 1: *dst = *src; break;
    default: std::memcpy(dst, src, n);
  }
}

// Element i of width w (1, 2, 4), rotated left by one bit (sign to bit 0), split into w
// planes: plane p (at planes + p * n) holds byte p of every rotated element.
inline void split_planes(const uint8_t* in, std::size_t n, std::size_t w, uint8_t* planes) {
  if (w == 1) {
    std::memcpy(planes, in, n);
  } else if (w == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, in + 2 * i, 2);
      v = static_cast<uint16_t>((v << 1) | (v >> 15));
      planes[i] = static_cast<uint8_t>(v);
      planes[n + i] = static_cast<uint8_t>(v >> 8);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, in + 4 * i, 4);
      v = (v << 1) | (v >> 31);
      planes[i] = static_cast<uint8_t>(v);
      planes[n + i] = static_cast<uint8_t>(v >> 8);
      planes[2 * n + i] = static_cast<uint8_t>(v >> 16);
      planes[3 * n + i] = static_cast<uint8_t>(v >> 24);
    }
  }
}

// The inverse of split_planes.
inline void merge_planes(const uint8_t* planes, std::size_t n, std::size_t w, uint8_t* out) {
  if (w == 1) {
    std::memcpy(out, planes, n);
  } else if (w == 2) {
    for (std::size_t i = 0; i < n; ++i) {
      auto v = static_cast<uint16_t>(planes[i] | (planes[n + i] << 8));
      v = static_cast<uint16_t>((v >> 1) | (v << 15));
      std::memcpy(out + 2 * i, &v, 2);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t v = static_cast<uint32_t>(planes[i]) | (static_cast<uint32_t>(planes[n + i]) << 8) |
                   (static_cast<uint32_t>(planes[2 * n + i]) << 16) |
                   (static_cast<uint32_t>(planes[3 * n + i]) << 24);
      v = (v >> 1) | (v << 31);
      std::memcpy(out + 4 * i, &v, 4);
    }
  }
}

inline std::size_t packed_bytes(std::size_t s, unsigned k) { return (s * k + 7) / 8; }

// Packs s values (v[i] - base, each < 2^k, k in 1..7) LSB-first into exactly
// packed_bytes(s, k) bytes at out.
inline void pack_bits(const uint8_t* v, std::size_t s, uint8_t base, unsigned k, uint8_t* out) {
  std::size_t i = 0;
  for (; i + 8 <= s; i += 8) {
    uint64_t acc = 0;
    for (unsigned j = 0; j < 8; ++j)
      acc |= static_cast<uint64_t>(static_cast<uint8_t>(v[i + j] - base)) << (j * k);
    if (packed_bytes(s - i, k) >= 8) {
      std::memcpy(out, &acc, 8);  // the bytes past k are rewritten by the next group
    } else {
      for (unsigned b = 0; b < k; ++b) out[b] = static_cast<uint8_t>(acc >> (8 * b));
    }
    out += k;
  }
  if (i < s) {
    uint64_t acc = 0;
    for (unsigned j = 0; i + j < s; ++j)
      acc |= static_cast<uint64_t>(static_cast<uint8_t>(v[i + j] - base)) << (j * k);
    const std::size_t tail = packed_bytes(s - i, k);
    for (std::size_t b = 0; b < tail; ++b) out[b] = static_cast<uint8_t>(acc >> (8 * b));
  }
}

// The inverse: out[i] = (base + value i) mod 256.
inline void unpack_bits(const uint8_t* in, std::size_t s, uint8_t base, unsigned k, uint8_t* out) {
  const uint64_t mask = (uint64_t{1} << k) - 1;
  std::size_t i = 0;
  for (; i + 8 <= s; i += 8) {
    uint64_t acc = 0;
    if (packed_bytes(s - i, k) >= 8) {
      std::memcpy(&acc, in, 8);  // bits past 8k belong to the next group: masked off below
    } else {
      for (unsigned b = 0; b < k; ++b) acc |= static_cast<uint64_t>(in[b]) << (8 * b);
    }
    for (unsigned j = 0; j < 8; ++j)
      out[i + j] = static_cast<uint8_t>(base + ((acc >> (j * k)) & mask));
    in += k;
  }
  if (i < s) {
    uint64_t acc = 0;
    const std::size_t tail = packed_bytes(s - i, k);
    for (std::size_t b = 0; b < tail; ++b) acc |= static_cast<uint64_t>(in[b]) << (8 * b);
    for (unsigned j = 0; i + j < s; ++j)
      out[i + j] = static_cast<uint8_t>(base + ((acc >> (j * k)) & mask));
  }
}

}  // namespace squeeze::compress::lossless_detail
