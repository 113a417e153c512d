// The quantize body's Rice-coded payload (compress/quantize_rice.h, compress/FORMAT.md).
#include "compress/quantize_rice.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "compress/bitpack.h"
#include "compress/quantize.h"

namespace squeeze::compress {
namespace rice {

void Writer::flush32() {
  if (ok_ && cap_ - at_ >= 4) {
    for (int i = 0; i < 4; ++i) out_[at_ + i] = static_cast<uint8_t>(acc_ >> (8 * i));
    at_ += 4;
  } else {
    ok_ = false;
  }
  acc_ >>= 32;
  fill_ -= 32;
}

std::size_t Writer::finish() {
  const unsigned bytes = (fill_ + 7) / 8;
  if (ok_ && cap_ - at_ >= bytes) {
    for (unsigned i = 0; i < bytes; ++i) out_[at_ + i] = static_cast<uint8_t>(acc_ >> (8 * i));
    at_ += bytes;
  } else if (bytes > 0) {
    ok_ = false;
  }
  acc_ = 0;
  fill_ = 0;
  return at_;
}

uint8_t encode_block(const int32_t* codes, unsigned n, Writer* w) {
  uint32_t z[kQuantizeBlock];
  uint64_t sum = 0;
  uint32_t any = 0;
  for (unsigned i = 0; i < n; ++i) {
    z[i] = (static_cast<uint32_t>(codes[i]) << 1) ^ static_cast<uint32_t>(codes[i] >> 31);
    sum += z[i];
    any |= z[i];
  }
  if (any == 0) return 0;
  // The size, sum(z >> k) + n(k + 1) bits (escapes aside), is about convex in k and least
  // near log2 of the mean: try the neighbours.
  const unsigned k0 = bitpack::bit_width(static_cast<uint32_t>(sum / n));
  unsigned best_k = 0;
  uint64_t best = UINT64_MAX;
  for (unsigned k = k0 >= 2 ? k0 - 2 : 0; k <= std::min(k0 + 2, kQuantizeMaxWidth); ++k) {
    uint64_t wide = 0;
    for (unsigned i = 0; i < n; ++i) wide += z[i] >> k;
    const uint64_t cost = wide + static_cast<uint64_t>(n) * (k + 1);
    if (cost < best) {
      best = cost;
      best_k = k;
    }
  }
  const unsigned k = best_k;
  const uint32_t mask = (1u << k) - 1;
  for (unsigned i = 0; i < n; ++i) {
    const uint32_t q = z[i] >> k;
    if (q + 1 + k <= 32) {  // one field: q zeros, a one, the k low bits
      w->put_wide((1ull << q) | (static_cast<uint64_t>(z[i] & mask) << (q + 1)), q + 1 + k);
    } else if (q < kRiceEscapeZeros) {
      w->put(1u << q, q + 1);
      w->put(z[i] & mask, k);
    } else {
      w->put(0, kRiceEscapeZeros);
      w->put(z[i], kRiceRawBits);
    }
  }
  return static_cast<uint8_t>(k + 1);
}

}  // namespace rice

namespace {

Status corrupt(const std::string& what, std::size_t off) {
  return {Status::Code::kCorrupt, "quantize: " + what + " at body offset " + std::to_string(off)};
}

// Eight payload bytes as a little-endian word, in one load.
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// 64 bits of the payload from bit `bit` on (zeros past its end); at least 57 are valid.
inline uint64_t peek(const uint8_t* p, std::size_t nbytes, uint64_t bit) {
  const auto byte = static_cast<std::size_t>(bit >> 3);
  uint64_t v = 0;
  if (byte + 8 <= nbytes) {
    v = load64(p + byte);
  } else {
    for (std::size_t i = 0; byte + i < nbytes && i < 8; ++i)
      v |= static_cast<uint64_t>(p[byte + i]) << (8 * i);
  }
  return v >> (bit & 7);
}

}  // namespace

Status rice_decode_codes(const QuantizeLayout& q, int32_t* codes) {
  const uint8_t* p = q.payload.data();
  const std::size_t nbytes = q.payload.size();
  const uint64_t nbits = static_cast<uint64_t>(nbytes) * 8;
  constexpr uint64_t kEscapeMask = (1ull << kRiceEscapeZeros) - 1;
  constexpr uint64_t kRawMask = (1ull << kRiceRawBits) - 1;
  uint64_t pos = 0;
  for (uint64_t b = 0; b < q.n_blocks; ++b) {
    const unsigned n =
        static_cast<unsigned>(std::min<uint64_t>(kQuantizeBlock, q.n_stream - b * kQuantizeBlock));
    const unsigned param = q.widths[b];
    int32_t* out = codes != nullptr ? codes + b * kQuantizeBlock : nullptr;
    if (param == 0) {
      if (out != nullptr) std::fill(out, out + n, 0);
      continue;
    }
    const unsigned k = param - 1;  // parse checked param <= kQuantizeMaxWidth + 1
    const uint64_t mask = (1ull << k) - 1;
    // Fast path: the block's worst case (every code escaped) plus a whole 8-byte load stays
    // inside the payload, so no code needs an end check; a code over 30 bits is looked for
    // once per block, and the checked walk below finds and names it.
    constexpr uint64_t kMaxCodeBits = kRiceEscapeZeros + kRiceRawBits;
    if (pos + n * kMaxCodeBits + 64 <= nbits) {
      uint64_t at = pos, over = 0;
      for (unsigned i = 0; i < n; ++i) {
        const uint64_t v = load64(p + (at >> 3)) >> (at & 7);  // >= 57 valid bits
        uint64_t z;
        if ((v & kEscapeMask) != 0) {
          const auto quotient = static_cast<unsigned>(__builtin_ctzll(v));
          at += quotient + 1;
          const uint64_t low = quotient + 1 + k <= 57 ? (v >> (quotient + 1)) & mask
                                                      : (load64(p + (at >> 3)) >> (at & 7)) & mask;
          z = (static_cast<uint64_t>(quotient) << k) | low;
          at += k;
        } else {
          at += kRiceEscapeZeros;
          z = (load64(p + (at >> 3)) >> (at & 7)) & kRawMask;
          at += kRiceRawBits;
        }
        over |= z;
        if (out != nullptr) {
          const auto zz = static_cast<uint32_t>(z);
          out[i] = static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
        }
      }
      if ((over >> kRiceRawBits) == 0) {
        pos = at;
        continue;
      }
    }
    for (unsigned i = 0; i < n; ++i) {
      const uint64_t v = peek(p, nbytes, pos);
      uint64_t z;
      if ((v & kEscapeMask) == 0) {
        pos += kRiceEscapeZeros;
        z = peek(p, nbytes, pos) & kRawMask;
        pos += kRiceRawBits;
      } else {
        const auto quotient = static_cast<unsigned>(__builtin_ctzll(v));
        pos += quotient + 1;
        z = (static_cast<uint64_t>(quotient) << k) | (peek(p, nbytes, pos) & mask);
        pos += k;
      }
      if (pos > nbits) {
        return corrupt("Rice code " + std::to_string(i) + " of block " + std::to_string(b) +
                           " runs past the payload's end (" + std::to_string(nbytes) + " bytes)",
                       q.payload_offset + nbytes);
      }
      if (z > kRawMask) {
        return corrupt(
            "Rice code " + std::to_string(i) + " of block " + std::to_string(b) + " has " +
                std::to_string(
                    bitpack::bit_width(static_cast<uint32_t>(std::min<uint64_t>(z, UINT32_MAX)))) +
                "+ bits, more than " + std::to_string(kRiceRawBits),
            q.payload_offset + static_cast<std::size_t>(pos / 8));
      }
      if (out != nullptr) {
        const auto zz = static_cast<uint32_t>(z);
        out[i] = static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
      }
    }
  }
  const uint64_t used = (pos + 7) / 8;
  if (used != nbytes) {
    return corrupt("Rice payload of " + std::to_string(nbytes) + " bytes ends after " +
                       std::to_string(used) + " (" + std::to_string(nbytes - used) +
                       " stray bytes before the escapes)",
                   q.payload_offset + static_cast<std::size_t>(used));
  }
  if (pos % 8 != 0 && (p[nbytes - 1] >> (pos % 8)) != 0)
    return corrupt("Rice payload padding bits are not zero", q.payload_offset + nbytes - 1);
  return Status::Ok();
}

}  // namespace squeeze::compress
