// CRC32C of a concatenation from the CRCs of its parts (zlib's crc32_combine, for the
// Castagnoli polynomial): crc32c(A ++ B) == crc32c_combine(crc32c(A), crc32c(B), |B|).
// Header-only and host/device friendly, so a GPU can checksum chunks in parallel and
// fold them in order into the same value the CPU computes.
#pragma once

#include <cstdint>

#include "compress/half.h"  // SQUEEZE_HD

namespace squeeze::compress {

// a * b modulo the CRC polynomial, in the reflected bit order CRC32C uses.
SQUEEZE_HD inline uint32_t crc32c_multmodp(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1u) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return p;
}

// x^(8n) modulo the polynomial: the operator that appends n zero bytes.
SQUEEZE_HD inline uint32_t crc32c_zeros_operator(uint64_t n) {
  uint32_t p = 1u << 31;    // x^0
  uint32_t x2k = 1u << 23;  // x^(2^3) = x^8: one byte
  while (n) {
    if (n & 1) p = crc32c_multmodp(x2k, p);
    n >>= 1;
    x2k = crc32c_multmodp(x2k, x2k);
  }
  return p;
}

SQUEEZE_HD inline uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return crc32c_multmodp(crc32c_zeros_operator(len_b), crc_a) ^ crc_b;
}

}  // namespace squeeze::compress
