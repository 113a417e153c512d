// Threshold codec decoder: validates the header, every position and the exact body length
// before writing; then zero-fills dst and scatters the kept values.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "compress/byte_io.h"
#include "compress/threshold.h"
#include "compress/threshold_values.h"

namespace squeeze::compress {

namespace {

Status corrupt(const std::string& what, std::size_t offset) {
  return {Status::Code::kCorrupt,
          "threshold body: " + what + " at offset " + std::to_string(offset)};
}
Status truncated(const std::string& what, std::size_t need, std::size_t have) {
  return {Status::Code::kTruncated, "threshold body: " + what + " needs " + std::to_string(need) +
                                        " bytes, body has " + std::to_string(have)};
}

// Writes the stored value at v (value dtype vd) as output element i (dtype dt, width w).
inline void put_element(uint8_t* out, uint64_t i, std::size_t w, Dtype dt, Dtype vd,
                        const uint8_t* v) {
  if (vd == dt) {
    if (w == 4) {
      std::memcpy(out + i * 4, v, 4);
    } else {
      std::memcpy(out + i * 2, v, 2);
    }
  } else {  // narrowed value widened to float32 output
    const float f = stored_value_as_float(vd, v);
    std::memcpy(out + i * 4, &f, 4);
  }
}

bool value_dtype_allowed(Dtype out, Dtype vd) {
  if (out == Dtype::kFloat32)
    return vd == Dtype::kFloat32 || vd == Dtype::kBfloat16 || vd == Dtype::kFloat16;
  return vd == out && is_float(out);
}

// Calls f(position) for each delta varint in [p, end); checks each is minimal, in range and
// that exactly `kept` of them fill the range. Returns Ok or a kCorrupt naming the offset.
template <typename F>
Status walk_varints(const uint8_t* begin, const uint8_t* end, uint64_t kept, uint64_t count,
                    F&& f) {
  const uint8_t* p = begin;
  uint64_t next = 0;  // smallest position the next element may have
  for (uint64_t k = 0; k < kept; ++k) {
    const std::size_t at = kThresholdHeaderBytes + static_cast<std::size_t>(p - begin);
    uint64_t d = 0;
    int shift = 0;
    for (;;) {
      if (p == end)
        return corrupt("position " + std::to_string(k) + " runs past the position section", at);
      const uint8_t b = *p++;
      if (shift == 63 && b > 1) return corrupt("position delta overflows 64 bits", at);
      d |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return corrupt("non-minimal varint", at);
        break;
      }
      shift += 7;
    }
    if (d >= count - next) {  // next <= count always holds; position = next + d must be < count
      return corrupt(
          "position " + std::to_string(k) + " is past the element count " + std::to_string(count),
          at);
    }
    const uint64_t pos = next + d;
    f(pos);
    next = pos + 1;
  }
  if (p != end) {
    return corrupt(std::to_string(end - p) + " stray bytes after the last position",
                   kThresholdHeaderBytes + static_cast<std::size_t>(p - begin));
  }
  return Status::Ok();
}

}  // namespace

Status threshold_peek_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                           ThresholdBodyInfo* info) {
  if (!is_float(dtype) || dtype_size(dtype) == 0) {
    return {Status::Code::kUnsupported,
            std::string("threshold body: dtype ") + dtype_name(dtype) + " is not float"};
  }
  ByteReader r(body);
  uint8_t mode = 0, vdb = 0;
  uint16_t reserved = 0;
  float tau = 0;
  uint64_t kept = 0;
  if (!r.get_u8(&mode) || !r.get_u8(&vdb) || !r.get_u16(&reserved) || !r.get_f32(&tau) ||
      !r.get_u64(&kept)) {
    return truncated("header", kThresholdHeaderBytes, body.size());
  }
  if (mode != kThresholdBitmap && mode != kThresholdDeltaVarint) {
    return corrupt("unknown position mode " + std::to_string(mode), 0);
  }
  const auto vd = static_cast<Dtype>(vdb);
  if (vdb > static_cast<uint8_t>(Dtype::kFloat16) || !value_dtype_allowed(dtype, vd)) {
    return corrupt(
        "value dtype " + std::to_string(vdb) + " not allowed for " + dtype_name(dtype) + " output",
        1);
  }
  if (reserved != 0) return corrupt("reserved field is " + std::to_string(reserved) + ", not 0", 2);
  if (kept > count)
    return corrupt(
        "kept count " + std::to_string(kept) + " exceeds element count " + std::to_string(count),
        8);
  info->position_mode = mode;
  info->value_dtype = vd;
  info->tau = tau;
  info->kept = kept;
  return Status::Ok();
}

Status threshold_decode_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                             std::span<uint8_t> dst) {
  ThresholdBodyInfo info;
  if (Status s = threshold_peek_body(body, dtype, count, &info); !s.ok()) return s;
  const std::size_t w = dtype_size(dtype);
  if (count > dst.size() / w) {
    return {Status::Code::kInvalidArgument, "threshold body: destination holds " +
                                                std::to_string(dst.size()) + " bytes, " +
                                                std::to_string(count) + " elements need more"};
  }
  const std::size_t vw = dtype_size(info.value_dtype);
  const std::size_t values_bytes = static_cast<std::size_t>(info.kept) * vw;
  const std::size_t after_header = body.size() - kThresholdHeaderBytes;
  if (values_bytes > after_header)
    return truncated("values", kThresholdHeaderBytes + values_bytes, body.size());
  const std::size_t pos_bytes = after_header - values_bytes;
  const uint8_t* pos = body.data() + kThresholdHeaderBytes;
  const uint8_t* values = pos + pos_bytes;
  uint8_t* out = dst.data();

  if (info.position_mode == kThresholdBitmap) {
    const std::size_t bitmap_bytes = static_cast<std::size_t>((count + 7) / 8);
    if (pos_bytes < bitmap_bytes) {
      return truncated("bitmap and values", kThresholdHeaderBytes + bitmap_bytes + values_bytes,
                       body.size());
    }
    if (pos_bytes > bitmap_bytes) {
      return corrupt(std::to_string(pos_bytes - bitmap_bytes) + " trailing bytes after the values",
                     kThresholdHeaderBytes + bitmap_bytes + values_bytes);
    }
    uint64_t ones = 0;
    for (std::size_t i = 0; i < bitmap_bytes; ++i)
      ones += static_cast<uint64_t>(std::popcount(pos[i]));
    if ((count & 7) != 0 && (pos[bitmap_bytes - 1] >> (count & 7)) != 0) {
      return corrupt("bitmap bits set past the element count",
                     kThresholdHeaderBytes + bitmap_bytes - 1);
    }
    if (ones != info.kept) {
      return corrupt("bitmap marks " + std::to_string(ones) + " elements, header says " +
                         std::to_string(info.kept),
                     8);
    }
    std::memset(out, 0, static_cast<std::size_t>(count) * w);
    const uint8_t* v = values;
    for (std::size_t word = 0; word < bitmap_bytes; word += 8) {
      uint64_t bits = 0;
      std::memcpy(&bits, pos + word, std::min<std::size_t>(8, bitmap_bytes - word));
      while (bits != 0) {
        const uint64_t i = word * 8 + static_cast<uint64_t>(std::countr_zero(bits));
        bits &= bits - 1;
        put_element(out, i, w, dtype, info.value_dtype, v);
        v += vw;
      }
    }
    return Status::Ok();
  }

  const uint8_t* end = pos + pos_bytes;
  if (Status s = walk_varints(pos, end, info.kept, count, [](uint64_t) {}); !s.ok()) return s;
  std::memset(out, 0, static_cast<std::size_t>(count) * w);
  const uint8_t* v = values;
  return walk_varints(pos, end, info.kept, count, [&](uint64_t i) {
    put_element(out, i, w, dtype, info.value_dtype, v);
    v += vw;
  });
}

}  // namespace squeeze::compress
