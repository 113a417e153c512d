// Parses and validates a quantize body without writing anything (compress/FORMAT.md).
#include <cmath>
#include <limits>
#include <string>

#include "compress/bitpack.h"
#include "compress/byte_io.h"
#include "compress/quantize.h"
#include "compress/quantize_math.h"

namespace squeeze::compress {
namespace {

Status bad(Status::Code code, const std::string& what, std::size_t off) {
  return {code, "quantize: " + what + " at body offset " + std::to_string(off)};
}
Status corrupt(const std::string& what, std::size_t off) {
  return bad(Status::Code::kCorrupt, what, off);
}
Status truncated(const std::string& what, std::size_t off, std::size_t need, std::size_t have) {
  return bad(
      Status::Code::kTruncated,
      what + " needs " + std::to_string(need) + " bytes, " + std::to_string(have) + " remain", off);
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Reads `n` bytes as a named section.
Status section(ByteReader* r, const char* what, uint64_t n, std::span<const uint8_t>* out) {
  const std::size_t off = r->offset();
  if (n > r->remaining())
    return truncated(what, off, static_cast<std::size_t>(std::min<uint64_t>(n, SIZE_MAX)),
                     r->remaining());
  r->get_bytes(static_cast<std::size_t>(n), out);
  return Status::Ok();
}

Status check_map(QuantizeLayout* q, std::size_t off) {
  uint64_t next_new = 0;
  for (uint64_t r = 0; r < q->n_full_rows; ++r) {
    const uint32_t m = bitpack::array_get(q->map.data(), r, q->map_bits);
    if (m > next_new) {
      return corrupt("row map entry " + std::to_string(r) + " = " + std::to_string(m) +
                         " skips ahead of the next new row id " + std::to_string(next_new),
                     off);
    }
    if (m == next_new) ++next_new;
  }
  if (next_new != q->n_unique) {
    return corrupt("row map names " + std::to_string(next_new) + " distinct rows, n_unique says " +
                       std::to_string(q->n_unique),
                   off);
  }
  const uint64_t used_bits = q->n_full_rows * q->map_bits;
  if (used_bits % 8 != 0 && (q->map.back() >> (used_bits % 8)) != 0) {
    return corrupt("row map padding bits are not zero", off + q->map.size() - 1);
  }
  return Status::Ok();
}

Status parse(std::span<const uint8_t> body, Dtype dtype, uint64_t count, QuantizeLayout* out,
             bool walk_rice) {
  QuantizeLayout q;
  const std::size_t esize = dtype_size(dtype);
  if (!is_float(dtype) || esize == 0) {
    return {Status::Code::kCorrupt,
            std::string("quantize: frame dtype ") + dtype_name(dtype) + " is not a float type"};
  }
  if (count > std::numeric_limits<uint32_t>::max()) {
    return {Status::Code::kCorrupt,
            "quantize: count " + std::to_string(count) + " exceeds 2^32-1 elements"};
  }
  ByteReader r(body);
  if (body.size() < kQuantizeHeaderBytes)
    return truncated("header", 0, kQuantizeHeaderBytes, body.size());
  uint8_t mode = 0, flags = 0;
  uint16_t reserved = 0;
  uint32_t row_length = 0;
  r.get_u8(&mode);
  r.get_u8(&flags);
  r.get_u16(&reserved);
  r.get_u32(&row_length);
  r.get_f64(&q.error_bound);
  r.get_f64(&q.bound_abs);
  r.get_f64(&q.offset);
  r.get_f32(&q.step);
  r.get_u32(&q.n_escapes);
  r.get_u32(&q.n_unique);
  if (mode > static_cast<uint8_t>(BoundMode::kRelRow))
    return corrupt("mode " + std::to_string(mode), 0);
  if ((flags & ~(kQuantizeFlagDedupe | kQuantizeFlagRice)) != 0)
    return corrupt("unknown flags " + std::to_string(flags), 1);
  if (reserved != 0)
    return corrupt("reserved field " + std::to_string(reserved) + " is not zero", 2);
  q.mode = static_cast<BoundMode>(mode);
  q.dedupe = (flags & kQuantizeFlagDedupe) != 0;
  q.rice = (flags & kQuantizeFlagRice) != 0;
  q.row_length = row_length;
  const bool rows = q.dedupe || q.mode == BoundMode::kRelRow;
  if (rows && row_length == 0) return corrupt("row_length 0 with rel-row mode or row dedupe", 4);
  if (!(std::isfinite(q.error_bound) && q.error_bound > 0))
    return corrupt("error_bound " + num(q.error_bound), 8);
  if (!(std::isfinite(q.bound_abs) && q.bound_abs >= 0))
    return corrupt("bound_abs " + num(q.bound_abs), 16);
  if (!std::isfinite(q.offset)) return corrupt("offset " + num(q.offset), 24);
  if (!(std::isfinite(q.step) && q.step >= 0)) return corrupt("step " + num(q.step), 32);

  q.n_full_rows = rows ? count / row_length : 0;
  q.tail = rows ? count % row_length : count;
  if (q.dedupe) {
    if (q.n_unique > q.n_full_rows || (q.n_unique == 0) != (q.n_full_rows == 0)) {
      return corrupt("n_unique " + std::to_string(q.n_unique) + " with " +
                         std::to_string(q.n_full_rows) + " rows",
                     40);
    }
    q.map_bits = q.n_unique > 1 ? bitpack::bit_width(q.n_unique - 1) : 0;
    q.n_stream = static_cast<uint64_t>(q.n_unique) * row_length + q.tail;
    const std::size_t map_off = r.offset();
    Status st =
        section(&r, "row map", bitpack::packed_array_bytes(q.n_full_rows, q.map_bits), &q.map);
    if (!st.ok()) return st;
    st = check_map(&q, map_off);
    if (!st.ok()) return st;
  } else {
    if (q.n_unique != 0)
      return corrupt("n_unique " + std::to_string(q.n_unique) + " without row dedupe", 40);
    q.n_stream = count;
  }
  if (q.mode == BoundMode::kRelRow) {
    if (q.offset != 0 || q.step != 0 || q.bound_abs != 0)
      return corrupt("message offset/step/bound_abs set in rel-row mode", 16);
    q.n_param_rows = (q.dedupe ? q.n_unique : q.n_full_rows) + (q.tail > 0 ? 1 : 0);
    const std::size_t off = r.offset();
    Status st = section(&r, "row parameters", q.n_param_rows * 8, &q.row_params);
    if (!st.ok()) return st;
    for (uint64_t k = 0; k < q.n_param_rows; ++k) {
      const float ro = f32_from_bits(load_le32(q.row_params.data() + 8 * k));
      const float rs = f32_from_bits(load_le32(q.row_params.data() + 8 * k + 4));
      if (!std::isfinite(ro))
        return corrupt("row " + std::to_string(k) + " offset " + num(ro), off + 8 * k);
      if (!(std::isfinite(rs) && rs >= 0))
        return corrupt("row " + std::to_string(k) + " step " + num(rs), off + 8 * k + 4);
    }
  }
  q.n_blocks = (q.n_stream + kQuantizeBlock - 1) / kQuantizeBlock;
  const std::size_t widths_off = r.offset();
  q.widths_offset = widths_off;
  Status st = section(&r, q.rice ? "Rice parameters" : "block widths", q.n_blocks, &q.widths);
  if (!st.ok()) return st;
  // Rice: 0 (all zero) or k + 1 with k <= 30; packed: the width, <= 30.
  const unsigned max_width = q.rice ? kQuantizeMaxWidth + 1 : kQuantizeMaxWidth;
  uint64_t payload = 0;
  for (uint64_t b = 0; b < q.n_blocks; ++b) {
    if (q.widths[b] > max_width) {
      return corrupt("block " + std::to_string(b) + (q.rice ? " Rice parameter " : " width ") +
                         std::to_string(q.widths[b]) + " exceeds " + std::to_string(max_width),
                     widths_off + b);
    }
    payload += 8u * q.widths[b];
  }
  if (q.n_escapes > q.n_stream) {
    return corrupt("n_escapes " + std::to_string(q.n_escapes) + " exceeds the " +
                       std::to_string(q.n_stream) + " quantized elements",
                   36);
  }
  if (q.rice) {  // the payload is what the escapes leave
    const uint64_t escapes = (4ull + esize) * q.n_escapes;
    if (escapes > r.remaining())
      return truncated("escapes", r.offset(), static_cast<std::size_t>(escapes), r.remaining());
    payload = r.remaining() - escapes;
  }
  q.payload_offset = r.offset();
  st = section(&r, "code payload", payload, &q.payload);
  if (!st.ok()) return st;
  const std::size_t esc_off = r.offset();
  st = section(&r, "escape indices", 4ull * q.n_escapes, &q.escape_index);
  if (!st.ok()) return st;
  st = section(&r, "escape values", static_cast<uint64_t>(esize) * q.n_escapes, &q.escape_values);
  if (!st.ok()) return st;
  if (!r.at_end()) return corrupt(std::to_string(r.remaining()) + " trailing bytes", r.offset());
  int64_t prev = -1;
  for (uint32_t e = 0; e < q.n_escapes; ++e) {
    const uint32_t idx = load_le32(q.escape_index.data() + 4ull * e);
    if (static_cast<int64_t>(idx) <= prev || idx >= q.n_stream) {
      return corrupt("escape index " + std::to_string(idx) + " is out of order or past " +
                         std::to_string(q.n_stream),
                     esc_off + 4ull * e);
    }
    prev = idx;
  }
  if (q.rice) {
    if (walk_rice) {
      st = rice_decode_codes(q, nullptr);
      if (!st.ok()) return st;
    }
    *out = q;
    return Status::Ok();
  }
  // Codes past the end of the last block are padding and must be zero.
  const uint64_t used = q.n_stream % kQuantizeBlock;
  if (used != 0 && q.widths[q.n_blocks - 1] != 0) {
    const unsigned w = q.widths[q.n_blocks - 1];
    uint32_t codes[kQuantizeBlock];
    bitpack::unpack64(q.payload.data() + q.payload.size() - 8u * w, w, codes);
    for (uint64_t i = used; i < kQuantizeBlock; ++i) {
      if (codes[i] != 0)
        return corrupt("padding code in the last block is not zero", widths_off + q.n_blocks - 1);
    }
  }
  *out = q;
  return Status::Ok();
}

}  // namespace

Status parse_quantize_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                           QuantizeLayout* out) {
  return parse(body, dtype, count, out, true);
}

Status parse_quantize_layout(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                             QuantizeLayout* out) {
  return parse(body, dtype, count, out, false);
}

}  // namespace squeeze::compress
