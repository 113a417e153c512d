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

namespace {

// Σ(z >> k) over the block for k = lo .. lo + count - 1. S is uint32_t when the sums cannot
// overflow it (four codes per SSE2 register instead of two).
template <typename S>
void shifted_sums(const uint32_t* z, unsigned n, unsigned lo, unsigned count, uint64_t* wide) {
  for (unsigned j = 0; j < count; ++j) {
    S acc = 0;
    for (unsigned i = 0; i < n; ++i) acc += z[i] >> (lo + j);
    wide[j] = acc;
  }
}

// Writes the accumulator's 8 bytes at `at` and advances by the whole ones (fill < 64). The
// bytes past them are the accumulator's zero high bits, rewritten later (or left as zeros
// inside dst).
inline __attribute__((always_inline)) void flush8(uint64_t& acc, unsigned& fill, std::size_t& at,
                                                  uint8_t* out) {
  uint64_t word = acc;
  if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
  std::memcpy(out + at, &word, 8);
  const unsigned whole = fill & ~7u;
  at += whole >> 3;
  acc >>= whole;
  fill -= whole;
}

// Codes of at most 64 / M - 2 bits each (one field: q zeros, a one, the k low bits), M of
// them between flushes: 7 bits left over plus M codes fit the 64-bit accumulator. The flush
// writes 8 bytes and advances by the whole ones (see put_codes).
template <unsigned M>
inline __attribute__((always_inline)) void put_short(const uint32_t* z, unsigned n, unsigned k,
                                                     uint64_t& acc, unsigned& fill, std::size_t& at,
                                                     uint8_t* out) {
  const uint32_t mask = (1u << k) - 1;
  auto flush = [&] { flush8(acc, fill, at, out); };
  unsigned i = 0;
  for (; i + M <= n; i += M) {
    for (unsigned j = 0; j < M; ++j) {
      const uint32_t q = z[i + j] >> k;
      acc |= ((static_cast<uint64_t>(z[i + j] & mask) << 1 | 1) << q) << fill;
      fill += q + 1 + k;
    }
    flush();
  }
  for (; i < n; ++i) {
    const uint32_t q = z[i] >> k;
    acc |= ((static_cast<uint64_t>(z[i] & mask) << 1 | 1) << q) << fill;
    fill += q + 1 + k;
    flush();
  }
}

}  // namespace

inline __attribute__((always_inline)) void Writer::put_codes(const uint32_t* z, unsigned n,
                                                             unsigned k, uint32_t any) {
  const uint32_t mask = (1u << k) - 1;
  // The block's longest coding (every code escaped) plus one 8-byte store fits: write 8
  // bytes after every code (or every 2 or 4 short codes) and advance by the whole bytes, no
  // branch on the fill level (flush8); the stream is the same as put()'s.
  constexpr std::size_t kFastRoom = kQuantizeBlock * (kRiceEscapeZeros + kRiceRawBits) / 8 + 16;
  if (ok_ && cap_ - at_ >= kFastRoom) {
    uint64_t acc = acc_;
    unsigned fill = fill_;  // < 32 on entry; <= 7 after every flush
    std::size_t at = at_;
    flush8(acc, fill, at, out_);                  // fill <= 7 from here on
    const uint32_t longest = (any >> k) + 1 + k;  // bits of the longest code, escapes aside
    if (longest <= 14) {
      put_short<4>(z, n, k, acc, fill, at, out_);
    } else if (longest <= 28) {
      put_short<2>(z, n, k, acc, fill, at, out_);
    }
    if (longest <= 28) {
      acc_ = acc;
      fill_ = fill;
      at_ = at;
      return;
    }
    auto flush = [&] { flush8(acc, fill, at, out_); };  // fill <= 7 + 32 + 30 - 8 < 64
    for (unsigned i = 0; i < n; ++i) {
      const uint32_t q = z[i] >> k;
      if (q + 1 + k <= 32) [[likely]] {  // one field: q zeros, a one, the k low bits
        acc |= ((1ull << q) | (static_cast<uint64_t>(z[i] & mask) << (q + 1))) << fill;
        fill += q + 1 + k;
      } else if (q < kRiceEscapeZeros) {
        acc |= (1ull << q) << fill;
        fill += q + 1;
        flush();
        acc |= static_cast<uint64_t>(z[i] & mask) << fill;
        fill += k;
      } else {
        fill += kRiceEscapeZeros;
        flush();
        acc |= static_cast<uint64_t>(z[i]) << fill;
        fill += kRiceRawBits;
      }
      flush();
    }
    acc_ = acc;
    fill_ = fill;
    at_ = at;
    return;
  }
  for (unsigned i = 0; i < n; ++i) {  // near the end of dst: every write checked
    const uint32_t q = z[i] >> k;
    if (q + 1 + k <= 32) {
      put_wide((1ull << q) | (static_cast<uint64_t>(z[i] & mask) << (q + 1)), q + 1 + k);
    } else if (q < kRiceEscapeZeros) {
      put(1u << q, q + 1);
      put(z[i] & mask, k);
    } else {
      put(0, kRiceEscapeZeros);
      put(z[i], kRiceRawBits);
    }
  }
}

namespace {

inline __attribute__((always_inline)) uint8_t encode_block_impl(const int32_t* codes, unsigned n,
                                                                Writer* w) {
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
  const unsigned lo = k0 >= 2 ? k0 - 2 : 0;
  const unsigned count = std::min(k0 + 2, kQuantizeMaxWidth) - lo + 1;
  uint64_t wide[5];
  if (any < (1u << 25)) {  // 64 codes below 2^25: every sum below 2^31
    shifted_sums<uint32_t>(z, n, lo, count, wide);
  } else {
    shifted_sums<uint64_t>(z, n, lo, count, wide);
  }
  unsigned best_k = 0;
  uint64_t best = UINT64_MAX;
  for (unsigned j = 0; j < count; ++j) {
    const uint64_t cost = wide[j] + static_cast<uint64_t>(n) * (lo + j + 1);
    if (cost < best) {
      best = cost;
      best_k = lo + j;
    }
  }
  Writer lw = *w;  // a local copy stays in registers; the caller's is written back once
  lw.put_codes(z, n, best_k, any);
  *w = lw;
  return static_cast<uint8_t>(best_k + 1);
}

#if defined(__x86_64__)
__attribute__((target("bmi,bmi2"))) uint8_t encode_block_bmi2(const int32_t* codes, unsigned n,
                                                              Writer* w) {
  return encode_block_impl(codes, n, w);  // one-uop variable shifts (shlx, shrx)
}
#endif

}  // namespace

uint8_t encode_block_portable(const int32_t* codes, unsigned n, Writer* w) {
  return encode_block_impl(codes, n, w);
}

uint8_t encode_block(const int32_t* codes, unsigned n, Writer* w) {
#if defined(__x86_64__)
  static const bool bmi2 = __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  if (bmi2) return encode_block_bmi2(codes, n, w);
#endif
  return encode_block_impl(codes, n, w);
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

namespace {

constexpr uint64_t kEscapeMask = (1ull << kRiceEscapeZeros) - 1;
constexpr uint64_t kRawMask = (1ull << kRiceRawBits) - 1;
constexpr uint64_t kMaxCodeBits = kRiceEscapeZeros + kRiceRawBits;
// Bytes a block's fast decode may read from the byte its first code starts in: every code
// at its longest, then up to 63 buffered bits and one whole 8-byte load (table_block).
constexpr std::size_t kBlockReach = (kQuantizeBlock * kMaxCodeBits + 7) / 8 + 8 + 8 + 8;

inline int32_t unzigzag(uint64_t z) {
  const auto zz = static_cast<uint32_t>(z);
  return static_cast<int32_t>((zz >> 1) ^ (0u - (zz & 1)));
}

// Decodes one block of n codes with parameter k from bit `at` of p, which holds at least
// at / 8 + kBlockReach readable bytes, so no load needs a check. The bits are kept in a
// register (buf, `avail` valid bits, zeros above them) that is refilled from memory when it
// runs low, so the chain from one code to the next is a count of trailing zeros and a shift,
// not a load. A code longer than what buf holds, or an escape, is read from memory. Returns
// the bit after the block. kWide (k > 25): a code may come out over 30 bits, which a decoder
// must reject; they are ORed into *over for the caller to check (with k <= 25, a quotient
// under 32 keeps z under 2^30, and an escape's z has 30 bits). Codes written to out are only
// meaningful when the block turns out valid.
template <bool kWide>
inline __attribute__((always_inline)) uint64_t fast_block(const uint8_t* p, uint64_t at, unsigned n,
                                                          unsigned k, int32_t* out,
                                                          uint64_t* over) {
  const uint64_t mask = (1ull << k) - 1;
  uint64_t buf = load64(p + (at >> 3)) >> (at & 7);
  unsigned avail = 64 - static_cast<unsigned>(at & 7);  // >= 57
  uint64_t ov = 0;
  for (unsigned i = 0; i < n; ++i) {
    const auto t = static_cast<unsigned>(std::countr_zero(buf));  // 64 when buf is 0
    const unsigned len = t + 1 + k;
    uint64_t z;
    if (t < kRiceEscapeZeros && len <= avail) [[likely]] {
      z = (static_cast<uint64_t>(t) << k) | ((buf >> (t + 1)) & mask);
      buf >>= len;  // len <= 31 + 1 + 30
      avail -= len;
      at += len;
      if (avail < 32) {
        buf = load64(p + (at >> 3)) >> (at & 7);
        avail = 64 - static_cast<unsigned>(at & 7);
      }
    } else {
      const uint64_t v = load64(p + (at >> 3)) >> (at & 7);  // >= 57 valid bits
      if ((v & kEscapeMask) != 0) {
        const auto quotient = static_cast<unsigned>(std::countr_zero(v));
        at += quotient + 1;
        z = (static_cast<uint64_t>(quotient) << k) | ((load64(p + (at >> 3)) >> (at & 7)) & mask);
        at += k;
      } else {
        at += kRiceEscapeZeros;
        z = (load64(p + (at >> 3)) >> (at & 7)) & kRawMask;
        at += kRiceRawBits;
      }
      buf = load64(p + (at >> 3)) >> (at & 7);
      avail = 64 - static_cast<unsigned>(at & 7);
    }
    if constexpr (kWide) ov |= z;
    out[i] = static_cast<int32_t>(static_cast<uint32_t>(z));  // zigzagged; see below
  }
  for (unsigned i = 0; i < n; ++i) out[i] = unzigzag(static_cast<uint32_t>(out[i]));  // SIMD
  *over |= ov;
  return at;
}

// Blocks with small parameters (k <= kTableMaxK: most of a 16 MiB gradient's blocks have
// k <= 1; CollNet's 64 KiB pieces mostly k = 3) decode several codes per step: a table,
// indexed by the next kTableBits bits, holds the codes that lie wholly inside them (up to 8,
// as int8) and the bits they take (4 x 1024 entries, 40 KB, built at compile time). The
// chain from one step to the next is one table load and a shift, for about 2-4 codes.
constexpr unsigned kTableBits = 10;
constexpr unsigned kTableMaxK = 3;
struct TableEntries {
  uint64_t codes[1u << kTableBits];  // code j (unzigzagged, int8) in byte j of memory
  uint8_t count[1u << kTableBits];   // codes in the entry (0: the first needs more bits)
  uint8_t bits[1u << kTableBits];    // bits they take
  uint32_t ends[1u << kTableBits];   // 4 bits per code: the bit after code j, at bits 4j..
};

constexpr TableEntries make_table(unsigned k) {
  TableEntries t{};
  for (unsigned x = 0; x < (1u << kTableBits); ++x) {
    unsigned pos = 0, count = 0;
    uint64_t codes = 0;
    while (count < 8) {
      unsigned q = 0;
      while (pos + q < kTableBits && ((x >> (pos + q)) & 1) == 0) ++q;
      if (pos + q + 1 + k > kTableBits) break;  // no one bit, or the low bits cut off
      const uint32_t z = (q << k) | ((x >> (pos + q + 1)) & ((1u << k) - 1));
      const auto code = static_cast<int8_t>(static_cast<int32_t>((z >> 1) ^ (0u - (z & 1))));
      const unsigned at_byte = std::endian::native == std::endian::big ? 7 - count : count;
      codes |= static_cast<uint64_t>(static_cast<uint8_t>(code)) << (8 * at_byte);
      pos += q + 1 + k;
      t.ends[x] |= pos << (4 * count);
      ++count;
    }
    t.codes[x] = codes;
    t.count[x] = static_cast<uint8_t>(count);
    t.bits[x] = static_cast<uint8_t>(pos);
  }
  return t;
}

constexpr TableEntries kTables[kTableMaxK + 1] = {make_table(0), make_table(1), make_table(2),
                                                  make_table(3)};
static_assert(kTableMaxK + 1 == std::size(kTables) && kTableBits < 16);

// A block with k <= kTableMaxK by table steps (the last one may take only the first codes of
// its entry), and fast_block for any code the table cannot hold (a long code or an escape).
// A step stores its eight int8 codes in one go to `narrow` (8 bytes of slack); they are
// widened to int32 a run at a time (a loop the compiler vectorizes). The bit buffer is
// refilled without a branch before each step (it holds 56..63 bits after): `ptr` is the next
// byte to load, so the stream position is 8 * ptr - avail; bits above avail are zero or the
// stream's own bits, which a refill ORs in again. Same contract as fast_block (codes are at
// most 10 bits from the table (z <= 6 << 3 | 7 = 55: an int8 code), 30 from an escape:
// never over 30 bits).
inline __attribute__((always_inline)) uint64_t table_block(const uint8_t* p, uint64_t at,
                                                           unsigned n, unsigned k, int32_t* out) {
  const TableEntries& t = kTables[k];
  constexpr uint64_t kIndex = (1u << kTableBits) - 1;
  int8_t narrow[kQuantizeBlock + 8];
  auto widen = [&](unsigned from, unsigned to) {
    for (unsigned j = from; j < to; ++j) out[j] = narrow[j];
  };
  uint64_t over = 0;
  unsigned i = 0, run = 0;  // codes [run, i) are in narrow
  while (i < n) {
    auto ptr = static_cast<std::size_t>(at >> 3) + 7;
    auto avail = 56 - static_cast<unsigned>(at & 7);
    uint64_t buf = load64(p + (at >> 3)) >> (at & 7);
    unsigned x = static_cast<unsigned>(buf & kIndex), count = t.count[x];
    while (count != 0 && count < n - i) {
      std::memcpy(narrow + i, &t.codes[x], 8);
      i += count;
      const unsigned bits = t.bits[x];
      buf >>= bits;
      avail -= bits;
      buf |= load64(p + ptr) << avail;
      ptr += (63 - avail) >> 3;
      avail |= 56;
      x = static_cast<unsigned>(buf & kIndex);
      count = t.count[x];
    }
    if (count != 0) {  // the block's last codes: the first n - i of the entry's
      std::memcpy(narrow + i, &t.codes[x], 8);
      avail -= (t.ends[x] >> (4 * (n - i - 1))) & 15;
      i = n;
    }
    at = 8 * static_cast<uint64_t>(ptr) - avail;
    if (i == n) break;
    widen(run, i);
    at = fast_block<false>(p, at, 1, k, out + i, &over);  // a code the table cannot hold
    run = ++i;
  }
  widen(run, n);
  return at;
}

// The whole payload: each block by fast_block (in place, or near the payload's end from a
// zero-padded copy of its last bytes), checked after the fact; a block that fails the check
// is walked again code by code with bounds checks, which names the error.
inline __attribute__((always_inline)) Status decode_walk(const QuantizeLayout& q, int32_t* codes) {
  const uint8_t* p = q.payload.data();
  const std::size_t nbytes = q.payload.size();
  const uint64_t nbits = static_cast<uint64_t>(nbytes) * 8;
  // The payload's last bytes, then zeros: where a block starts too near the end for
  // fast_block to read in place.
  const std::size_t tail_from = nbytes > kBlockReach ? nbytes - kBlockReach : 0;
  uint8_t tail[2 * kBlockReach + 8] = {};
  if (nbytes > tail_from) std::memcpy(tail, p + tail_from, nbytes - tail_from);
  int32_t scratch[kQuantizeBlock];
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
    {
      uint64_t over = 0, end;
      int32_t* dst = out != nullptr ? out : scratch;
      const bool in_place = (pos >> 3) + kBlockReach <= nbytes;
      const uint8_t* from = in_place ? p : tail;
      const uint64_t base = in_place ? 0 : static_cast<uint64_t>(tail_from) * 8;
      end = base + (k <= kTableMaxK ? table_block(from, pos - base, n, k, dst)
                    : k > 25        ? fast_block<true>(from, pos - base, n, k, dst, &over)
                                    : fast_block<false>(from, pos - base, n, k, dst, &over));
      if (end <= nbits && (over >> kRiceRawBits) == 0) {
        pos = end;
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

#if defined(__x86_64__)
__attribute__((target("bmi,bmi2"))) Status rice_decode_bmi2(const QuantizeLayout& q,
                                                            int32_t* codes) {
  return decode_walk(q, codes);  // the same code with one-uop shifts (shrx) and tzcnt
}
#endif

}  // namespace

Status rice_decode_codes_portable(const QuantizeLayout& q, int32_t* codes) {
  return decode_walk(q, codes);
}

Status rice_decode_codes(const QuantizeLayout& q, int32_t* codes) {
#if defined(__x86_64__)
  static const bool bmi2 = __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  if (bmi2) return rice_decode_bmi2(q, codes);
#endif
  return decode_walk(q, codes);
}

}  // namespace squeeze::compress
