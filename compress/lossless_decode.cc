// Lossless codec decoder. Pass 1 walks the header, the size table and every packed block's
// structure (maps and segment headers) and checks that each part ends exactly where the
// next begins; only then does pass 2 write dst, and it cannot fail.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "compress/byte_io.h"
#include "compress/lossless.h"
#include "compress/lossless_planes.h"

namespace squeeze::compress {

using lossless_detail::merge_planes;
using lossless_detail::packed_bytes;
using lossless_detail::unpack_bits;

namespace {

Status corrupt(const std::string& what, std::size_t offset) {
  return {Status::Code::kCorrupt,
          "lossless body: " + what + " at offset " + std::to_string(offset)};
}

struct GroupMap {
  uint8_t l0[kLosslessBlockBytes / 8] = {};
  std::size_t group_bytes = 0;  // bytes one map bit covers
  std::size_t groups = 0;
  std::size_t bytes = 0;  // bytes of the nonzero groups
  bool all = false;       // every group is nonzero
};

// Parses the granularity byte and the two-level map at p (n bytes available) of a block of
// len bytes at body offset `at`; *used = bytes it occupies.
Status read_map(const uint8_t* p, std::size_t n, std::size_t len, std::size_t w, std::size_t at,
                GroupMap* m, std::size_t* used) {
  if (n == 0) return corrupt("packed block is empty", at);
  if (p[0] != kLosslessMapGroups && p[0] != kLosslessMapElements) {
    return corrupt("zero-map granularity " + std::to_string(p[0]) + " (want 0 or 1)", at);
  }
  m->group_bytes = p[0] == kLosslessMapElements ? w : kLosslessGroupBytes;
  m->groups = (len + m->group_bytes - 1) / m->group_bytes;
  const std::size_t l0_bytes = (m->groups + 7) / 8;
  const std::size_t l1_bytes = (l0_bytes + 7) / 8;
  if (n - 1 < l1_bytes) return corrupt("block zero map runs past the block", at + 1);
  const uint8_t* l1 = p + 1;
  std::size_t k = 1 + l1_bytes;
  std::size_t nonzero = 0;
  for (std::size_t j8 = 0; j8 < l1_bytes; ++j8) {
    for (unsigned bits = l1[j8]; bits != 0; bits &= bits - 1) {
      const std::size_t j = j8 * 8 + static_cast<std::size_t>(std::countr_zero(bits));
      if (j >= l0_bytes)
        return corrupt("zero map level-1 bit " + std::to_string(j) + " past the map", at + 1 + j8);
      if (k == n) return corrupt("block zero map runs past the block", at + k);
      if (p[k] == 0) return corrupt("zero map lists a zero byte", at + k);
      m->l0[j] = p[k++];
      nonzero += static_cast<std::size_t>(std::popcount(m->l0[j]));
    }
  }
  const std::size_t last = m->groups - 1;
  if ((m->groups & 7) != 0 && (m->l0[l0_bytes - 1] >> (m->groups & 7)) != 0) {
    return corrupt("zero map marks groups past the block", at);
  }
  m->bytes = nonzero * m->group_bytes;
  if ((m->l0[last >> 3] >> (last & 7) & 1u) != 0) m->bytes -= m->groups * m->group_bytes - len;
  m->all = nonzero == m->groups;
  *used = k;
  return Status::Ok();
}

// Checks a packed block of `size` bytes at body offset `at` for a block of len bytes.
Status check_packed(const uint8_t* p, std::size_t size, std::size_t len, std::size_t w,
                    std::size_t at) {
  GroupMap map;
  std::size_t k = 0;
  if (Status s = read_map(p, size, len, w, at, &map, &k); !s.ok()) return s;
  const std::size_t m = map.bytes / w;
  for (std::size_t plane = 0; plane < w; ++plane) {
    for (std::size_t s0 = 0; s0 < m; s0 += kLosslessSegment) {
      const std::size_t s = std::min(kLosslessSegment, m - s0);
      if (k == size) return corrupt("segment header runs past the block", at + k);
      const uint8_t kind = p[k];
      std::size_t need;
      if (kind == kLosslessSegmentRaw) {
        need = 1 + s;
      } else if (kind < kLosslessSegmentRaw) {
        need = 2 + packed_bytes(s, kind);
      } else {
        return corrupt("segment bit width " + std::to_string(kind) + " (max 8)", at + k);
      }
      if (size - k < need) return corrupt("segment runs past the block", at + k);
      if (kind > 0 && kind < kLosslessSegmentRaw && ((s * kind) & 7) != 0 &&
          (p[k + need - 1] >> ((s * kind) & 7)) != 0) {
        return corrupt("segment padding bits are not zero", at + k + need - 1);
      }
      k += need;
    }
  }
  if (k != size)
    return corrupt(std::to_string(size - k) + " stray bytes at the end of a packed block", at + k);
  return Status::Ok();
}

// Decodes a packed block of `size` bytes that check_packed accepted.
void decode_packed(const uint8_t* p, std::size_t size, std::size_t len, std::size_t w,
                   uint8_t* out) {
  GroupMap map;
  std::size_t k = 0;
  read_map(p, size, len, w, 0, &map, &k);
  const std::size_t m = map.bytes / w;
  alignas(16) uint8_t planes[kLosslessBlockBytes];
  for (std::size_t plane = 0; plane < w; ++plane) {
    for (std::size_t s0 = 0; s0 < m; s0 += kLosslessSegment) {
      const std::size_t s = std::min(kLosslessSegment, m - s0);
      uint8_t* dst = planes + plane * m + s0;
      const uint8_t kind = p[k];
      if (kind == kLosslessSegmentRaw) {
        std::memcpy(dst, p + k + 1, s);
        k += 1 + s;
      } else {
        if (kind == 0) {
          std::memset(dst, p[k + 1], s);
        } else {
          unpack_bits(p + k + 2, s, p[k + 1], kind, dst);
        }
        k += 2 + packed_bytes(s, kind);
      }
    }
  }
  if (map.all) {
    merge_planes(planes, m, w, out);
    return;
  }
  alignas(16) uint8_t gathered[kLosslessBlockBytes];
  merge_planes(planes, m, w, gathered);
  std::memset(gathered + map.bytes, 0, len - map.bytes);  // read (and masked off) below
  // Branch-free expansion: each whole group reads the next gathered bytes and keeps them
  // only when its map bit is set; the read position advances only past set groups.
  const std::size_t gb = map.group_bytes, whole = len / gb;
  std::size_t from = 0;
  for (std::size_t g = 0; g < whole; ++g) {
    const uint64_t set = (map.l0[g >> 3] >> (g & 7)) & 1u;
    const uint64_t mask = 0 - set;
    uint8_t* to = out + g * gb;
    const uint8_t* src = gathered + from;
    if (gb == 16) {
      uint64_t a, b;
      std::memcpy(&a, src, 8);
      std::memcpy(&b, src + 8, 8);
      a &= mask;
      b &= mask;
      std::memcpy(to, &a, 8);
      std::memcpy(to + 8, &b, 8);
    } else if (gb == 4) {
      uint32_t a;
      std::memcpy(&a, src, 4);
      a &= static_cast<uint32_t>(mask);
      std::memcpy(to, &a, 4);
    } else if (gb == 2) {
      uint16_t a;
      std::memcpy(&a, src, 2);
      a = static_cast<uint16_t>(a & mask);
      std::memcpy(to, &a, 2);
    } else {
      *to = static_cast<uint8_t>(*src & mask);
    }
    from += set * gb;
  }
  if (whole * gb < len) {  // a short last group
    const std::size_t n = len - whole * gb;
    if ((map.l0[whole >> 3] >> (whole & 7)) & 1u) {
      std::memcpy(out + whole * gb, gathered + from, n);
    } else {
      std::memset(out + whole * gb, 0, n);
    }
  }
}

}  // namespace

Status lossless_decode_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                            std::span<uint8_t> dst) {
  const std::size_t w = dtype_size(dtype);
  if (w == 0) {
    return {Status::Code::kUnsupported,
            "lossless body: unknown dtype " + std::to_string(static_cast<unsigned>(dtype))};
  }
  if (count > dst.size() / w) {
    return {Status::Code::kInvalidArgument, "lossless body: destination holds " +
                                                std::to_string(dst.size()) + " bytes, " +
                                                std::to_string(count) + " elements need more"};
  }
  const std::size_t bytes = static_cast<std::size_t>(count) * w;
  if (body.size() < kLosslessHeaderBytes) {
    return {Status::Code::kTruncated,
            "lossless body: header needs 4 bytes, body has " + std::to_string(body.size())};
  }
  if (body[0] != kLosslessBlockShift)
    return corrupt("block shift " + std::to_string(body[0]) + " (want 12)", 0);
  if (body[1] != kLosslessGroupShift)
    return corrupt("group shift " + std::to_string(body[1]) + " (want 4)", 1);
  const uint8_t flags = w > 1 ? kLosslessFlagRotate : 0;
  if (body[2] != flags)
    return corrupt("flags " + std::to_string(body[2]) + " (want " + std::to_string(flags) + ")", 2);
  if (body[3] != 0) return corrupt("reserved byte " + std::to_string(body[3]) + " is not 0", 3);
  const std::size_t blocks = (bytes + kLosslessBlockBytes - 1) / kLosslessBlockBytes;
  if ((body.size() - kLosslessHeaderBytes) / 2 < blocks) {
    return {Status::Code::kTruncated, "lossless body: size table of " + std::to_string(blocks) +
                                          " blocks runs past the body of " +
                                          std::to_string(body.size()) + " bytes"};
  }
  const uint8_t* table = body.data() + kLosslessHeaderBytes;
  const std::size_t first = kLosslessHeaderBytes + 2 * blocks;

  // Pass 1: structure.
  std::size_t pos = first;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t len = std::min(kLosslessBlockBytes, bytes - b * kLosslessBlockBytes);
    const std::size_t size = load_le16(table + 2 * b);
    if (size > len) {
      return corrupt("block " + std::to_string(b) + " size " + std::to_string(size) +
                         " exceeds its " + std::to_string(len) + " bytes",
                     kLosslessHeaderBytes + 2 * b);
    }
    if (body.size() - pos < size) {
      return {Status::Code::kTruncated, "lossless body: block " + std::to_string(b) +
                                            " at offset " + std::to_string(pos) + " needs " +
                                            std::to_string(size) + " bytes, " +
                                            std::to_string(body.size() - pos) + " remain"};
    }
    if (size != 0 && size != len) {
      if (Status s = check_packed(body.data() + pos, size, len, w, pos); !s.ok()) return s;
    }
    pos += size;
  }
  if (pos != body.size())
    return corrupt(std::to_string(body.size() - pos) + " trailing bytes after the last block", pos);

  // Pass 2: write.
  pos = first;
  for (std::size_t b = 0; b < blocks; ++b) {
    uint8_t* out = dst.data() + b * kLosslessBlockBytes;
    const std::size_t len = std::min(kLosslessBlockBytes, bytes - b * kLosslessBlockBytes);
    const std::size_t size = load_le16(table + 2 * b);
    if (size == 0) {
      std::memset(out, 0, len);
    } else if (size == len) {
      std::memcpy(out, body.data() + pos, len);
    } else {
      decode_packed(body.data() + pos, size, len, w, out);
    }
    pos += size;
  }
  return Status::Ok();
}

}  // namespace squeeze::compress
