// Lossless codec encoder: each 4096-byte block independently (zero / raw / packed), then the
// size table and the blocks in order.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string>

#include "compress/byte_io.h"
#include "compress/lossless.h"
#include "compress/lossless_planes.h"

namespace squeeze::compress {

using lossless_detail::pack_bits;
using lossless_detail::packed_bytes;
using lossless_detail::split_planes;

namespace {

// nz[e] = 1 when element e (w bytes) is nonzero; returns how many are.
std::size_t mark_nonzero(const uint8_t* in, std::size_t elems, std::size_t w, uint8_t* nz) {
  std::size_t count = 0;
  if (w == 4) {
    for (std::size_t e = 0; e < elems; ++e) {
      uint32_t v;
      std::memcpy(&v, in + 4 * e, 4);
      nz[e] = v != 0;
      count += nz[e];
    }
  } else if (w == 2) {
    for (std::size_t e = 0; e < elems; ++e) {
      uint16_t v;
      std::memcpy(&v, in + 2 * e, 2);
      nz[e] = v != 0;
      count += nz[e];
    }
  } else {
    for (std::size_t e = 0; e < elems; ++e) {
      nz[e] = in[e] != 0;
      count += nz[e];
    }
  }
  return count;
}

// 1 when any of the n (<= 16) flags at p is set.
inline uint8_t any_set(const uint8_t* p, std::size_t n) {
  if (n == 16) {
    uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    return (a | b) != 0;
  }
  if (n == 8) {
    uint64_t a;
    std::memcpy(&a, p, 8);
    return a != 0;
  }
  if (n == 4) {
    uint32_t a;
    std::memcpy(&a, p, 4);
    return a != 0;
  }
  uint8_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc = static_cast<uint8_t>(acc | p[i]);
  return acc != 0;
}

// Encodes one segment of s plane bytes at o if it fits before end; returns the new o, or
// nullptr when it does not fit.
uint8_t* put_segment(const uint8_t* v, std::size_t s, uint8_t* o, const uint8_t* end) {
  uint8_t lo = 255, hi = 0;
  for (std::size_t i = 0; i < s; ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  const auto k = static_cast<unsigned>(std::bit_width(static_cast<unsigned>(hi - lo)));
  const std::size_t packed = 2 + packed_bytes(s, k);
  if (packed < 1 + s) {
    if (static_cast<std::size_t>(end - o) < packed) return nullptr;
    o[0] = static_cast<uint8_t>(k);
    o[1] = lo;
    if (k > 0) pack_bits(v, s, lo, k, o + 2);
    return o + packed;
  }
  if (static_cast<std::size_t>(end - o) < 1 + s) return nullptr;
  o[0] = kLosslessSegmentRaw;
  std::memcpy(o + 1, v, s);
  return o + 1 + s;
}

}  // namespace

std::size_t lossless_encode_block(const uint8_t* in, std::size_t len, std::size_t width,
                                  uint8_t* out) {
  const std::size_t w = width;
  const std::size_t elems = len / w;
  alignas(16) uint8_t nz[kLosslessBlockBytes];  // 1 per nonzero element
  const std::size_t nonzero_elems = mark_nonzero(in, elems, w, nz);
  if (nonzero_elems == 0) return 0;

  // Granularity of the zero map: 16-byte groups, or single elements when that removes
  // enough more zero bytes to pay for its larger map (estimated in bits, FORMAT.md).
  const std::size_t per_group = kLosslessGroupBytes / w;
  const std::size_t groups16 = (elems + per_group - 1) / per_group;
  alignas(16) uint8_t group_any[kLosslessBlockBytes / kLosslessGroupBytes];
  std::size_t zero_group_bytes = 0, zero_groups = 0;
  if (nonzero_elems == elems) {
    std::memset(group_any, 1, groups16);
  } else {
    for (std::size_t g = 0; g < groups16; ++g) {
      const std::size_t e0 = g * per_group;
      group_any[g] = any_set(nz + e0, std::min(per_group, elems - e0));
      if (group_any[g] == 0) {
        zero_group_bytes += std::min(per_group, elems - e0) * w;
        ++zero_groups;
      }
    }
  }
  const auto gain_elem =
      static_cast<int64_t>(8 * w * (elems - nonzero_elems)) - static_cast<int64_t>(elems);
  const auto gain_group =
      static_cast<int64_t>(8 * zero_group_bytes) - static_cast<int64_t>(groups16);
  const bool by_element = gain_elem > gain_group;
  const std::size_t ge = by_element ? 1 : per_group;  // elements per map bit
  const std::size_t groups = by_element ? elems : groups16;
  const uint8_t* bit = by_element ? nz : group_any;  // 0/1 per map bit

  uint8_t l0[kLosslessBlockBytes / 8] = {};
  std::size_t g8 = 0;
  for (; g8 + 8 <= groups; g8 += 8) {  // eight 0/1 bytes -> one bitmap byte, LSB first
    uint64_t x;
    std::memcpy(&x, bit + g8, 8);
    l0[g8 >> 3] = static_cast<uint8_t>((x * 0x0102040810204080ull) >> 56);
  }
  for (std::size_t g = g8; g < groups; ++g)
    l0[g >> 3] = static_cast<uint8_t>(l0[g >> 3] | (bit[g] << (g & 7)));
  const std::size_t nonzero_groups = by_element ? nonzero_elems : groups16 - zero_groups;

  uint8_t* o = out;
  const uint8_t* const end = out + len - 1;  // a packed block must be smaller than len
  const std::size_t l0_bytes = (groups + 7) / 8;
  const std::size_t l1_bytes = (l0_bytes + 7) / 8;
  std::size_t listed = 0;  // nonzero L0 bytes, stored after L1
  for (std::size_t j = 0; j < l0_bytes; ++j) listed += l0[j] != 0;
  bool fits = static_cast<std::size_t>(end - o) >= 1 + l1_bytes + listed;
  if (fits) {
    *o++ = by_element ? kLosslessMapElements : kLosslessMapGroups;
    std::memset(o, 0, l1_bytes);
    uint8_t* l1 = o;
    o += l1_bytes;
    for (std::size_t j = 0; j < l0_bytes; ++j) {
      if (l0[j] == 0) continue;
      l1[j >> 3] = static_cast<uint8_t>(l1[j >> 3] | (1u << (j & 7)));
      *o++ = l0[j];
    }
  }

  // The nonzero groups, gathered (in place when every group is nonzero).
  alignas(16) uint8_t gathered[kLosslessBlockBytes];
  alignas(16) uint8_t planes[kLosslessBlockBytes];
  const uint8_t* data = in;
  std::size_t bytes = len;
  if (fits && nonzero_groups < groups) {
    // Branch-free compaction: every whole group is copied, and the write position advances
    // only past the nonzero ones (a zero group's copy is overwritten or lies past the end).
    const std::size_t gb = ge * w, whole = len / gb;
    bytes = 0;
    for (std::size_t g = 0; g < whole; ++g) {
      lossless_detail::copy_small(gathered + bytes, in + g * gb, gb);
      bytes += bit[g] * gb;
    }
    if (whole < groups && bit[whole] != 0) {  // a short last group
      std::memcpy(gathered + bytes, in + whole * gb, len - whole * gb);
      bytes += len - whole * gb;
    }
    data = gathered;
  }
  if (fits) {
    const std::size_t m = bytes / w;
    split_planes(data, m, w, planes);
    for (std::size_t p = 0; p < w && o != nullptr; ++p) {
      for (std::size_t s0 = 0; s0 < m && o != nullptr; s0 += kLosslessSegment) {
        o = put_segment(planes + p * m + s0, std::min(kLosslessSegment, m - s0), o, end);
      }
    }
    fits = o != nullptr;
  }
  if (!fits) {
    std::memcpy(out, in, len);
    return len;
  }
  return static_cast<std::size_t>(o - out);
}

std::size_t lossless_body_bound_bytes(std::size_t bytes) {
  const std::size_t blocks = (bytes + kLosslessBlockBytes - 1) / kLosslessBlockBytes;
  return kLosslessHeaderBytes + 2 * blocks + bytes;
}

std::size_t lossless_body_bound(const EncodeRequest& req) {
  const std::size_t w = dtype_size(req.dtype) == 0 ? 1 : dtype_size(req.dtype);
  return lossless_body_bound_bytes(static_cast<std::size_t>(req.count) * w);
}

Status lossless_encode_body(const EncodeRequest& req, std::span<uint8_t> dst,
                            std::size_t* written) {
  *written = 0;
  const std::size_t w = dtype_size(req.dtype);
  if (w == 0) {
    return {Status::Code::kInvalidArgument,
            "lossless encode: unknown dtype " + std::to_string(static_cast<unsigned>(req.dtype))};
  }
  if (req.count > std::numeric_limits<std::size_t>::max() / 8) {
    return {Status::Code::kInvalidArgument,
            "lossless encode: count " + std::to_string(req.count) + " too large"};
  }
  const std::size_t bytes = static_cast<std::size_t>(req.count) * w;
  if (bytes > 0 && req.src == nullptr) {
    return {Status::Code::kInvalidArgument,
            "lossless encode: null source with count " + std::to_string(req.count)};
  }
  const auto* in = static_cast<const uint8_t*>(req.src);
  const std::size_t blocks = (bytes + kLosslessBlockBytes - 1) / kLosslessBlockBytes;
  const std::size_t table = kLosslessHeaderBytes + 2 * blocks;
  auto no_space = [&](std::size_t need) {
    return Status(Status::Code::kNoSpace, "lossless encode: body needs more than " +
                                              std::to_string(need) + " bytes, dst holds " +
                                              std::to_string(dst.size()));
  };
  if (dst.size() < table) return no_space(table);
  ByteWriter hw(dst.first(kLosslessHeaderBytes));
  hw.put_u8(static_cast<uint8_t>(kLosslessBlockShift));
  hw.put_u8(static_cast<uint8_t>(kLosslessGroupShift));
  hw.put_u8(w > 1 ? kLosslessFlagRotate : 0);
  hw.put_u8(0);

  alignas(16) uint8_t scratch[kLosslessBlockBytes];
  std::size_t pos = table;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t off = b * kLosslessBlockBytes;
    const std::size_t len = std::min(kLosslessBlockBytes, bytes - off);
    // Encode straight into dst when a raw block would fit there, else via scratch.
    const bool direct = dst.size() - pos >= len;
    uint8_t* target = direct ? dst.data() + pos : scratch;
    const std::size_t n = lossless_encode_block(in + off, len, w, target);
    if (dst.size() - pos < n) return no_space(pos + n);
    if (!direct && n > 0) std::memcpy(dst.data() + pos, scratch, n);
    store_le16(dst.data() + kLosslessHeaderBytes + 2 * b, static_cast<uint16_t>(n));
    pos += n;
  }
  *written = pos;
  return Status::Ok();
}

}  // namespace squeeze::compress
